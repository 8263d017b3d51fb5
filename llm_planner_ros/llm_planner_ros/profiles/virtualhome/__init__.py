"""The built-in world: VirtualHome's apartment (EAI's scene 1) and its 42 actions."""
