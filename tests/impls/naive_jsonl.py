"""A JSON Lines implementation built on the bundled naive translator or one of its mutants.

Usage: python naive_jsonl.py [MUTANT]. Without an argument it answers as the bug-free naive
translator does; with a mutant's name, with that mutant's bug (e.g. ``index_past_end`` writes one
structure past the end of a view, into the guard words the request puts there). An instance the
translator cannot run is answered `unsupported` with its reason (the protocol has no error reply).
"""

import json
import sys

from sm5.conformance.mutants import MUTANTS
from sm5.conformance.mutants.base import NaiveTranslator
from sm5.vectors.format import Vector

impl = MUTANTS[sys.argv[1]]() if len(sys.argv) > 1 else NaiveTranslator()
for line in sys.stdin:
    request = json.loads(line)
    vector = Vector(request["id"], tuple(request["program"]), request["target"],
                    request["runtime"], request["state"], {})
    result = impl.run(vector)
    answer = result.state if result.status == "state" else result.reason
    status = "unsupported" if result.status == "error" else result.status
    print(json.dumps({"id": request["id"], status: answer}), flush=True)
