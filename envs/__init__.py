"""The generic RL adapters over any game's engine and codec: the Gymnasium
helpers (``policies``), the batched-env base (``batched``) and the PettingZoo
AEC base (``aec.base``).  No game is named here: each game's folder
(``games/<name>/``) builds its envs on these, and the registry (``games``)
registers their Gymnasium ids (``import games``, then ``gymnasium.make("Dice420-v0")``).
"""
