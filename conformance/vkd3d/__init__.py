"""vkd3d-shader (DXBC -> SPIR-V) on Mesa lavapipe: a real third-party SM5 implementation."""
