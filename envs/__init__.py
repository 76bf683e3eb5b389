"""Rules engines (``game420``, ``game421``: plain Python) and the RL adapters over them.

Importing ``envs`` registers the Gymnasium ids (when gymnasium is installed):
``Dice420-v0`` and ``Dice421-v0``.
"""

try:
    from gymnasium.envs.registration import register, registry
except ImportError:  # the engines work without any RL library
    register = None

if register is not None and "Dice420-v0" not in registry:
    register(id="Dice420-v0", entry_point="envs.dice420_env:Dice420Env")

if register is not None and "Dice421-v0" not in registry:
    register(id="Dice421-v0", entry_point="envs.dice421_env:Dice421Env")
