"""call_depth_unlimited: a 33rd nested call is executed.

D3D's return stack holds 32 entries: a call made with 32 entries on it is skipped over, defined
behaviour (FS 7.12, 22.7.10). No implementation read models the skip (dxbc-spirv emits real
SPIR-V functions; RenderDoc has no call support); a translator that emits plain function calls
runs the 33rd. The call-depth vectors (a chain of 33 nested calls) catch it.
"""

from __future__ import annotations

from sm5.conformance.mutants.base import NaiveTranslator


class CallDepthUnlimited(NaiveTranslator):
    name = "call_depth_unlimited"

    def call_allowed(self, depth: int) -> bool:
        return True
