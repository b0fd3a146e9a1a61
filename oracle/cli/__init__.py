"""The oracle's command-line front ends: spec, exec, prove and dxbc."""
