"""The learned TapFinger policy (Sec. IV): HAN state encoding, pointer-network task selection, Bayes
conflict resolution, masked MAPPO; and the vanilla MARL ablation of Fig. 7.

Needs the optional extra ``edgeopt[rl]`` (PyTorch, PyTorch Geometric, safetensors). This package
imports no torch itself: `registry` checks for it and registers ``online`` and ``vanilla_marl``
only when it is installed and a checkpoint ships. Modules: `config`, `graph` (eq. 9), `encoder`
(HAN; `dense` is its padded backend), `actor` (eqs. 10, 12), `conflict` (eq. 11), `critic`, `model`, `mappo` (eqs. 13-14),
`trainer`, `checkpoint`, `runner`, `cli`.
"""
