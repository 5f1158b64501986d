"""Compile errors that carry a command reproducing them."""


class DynoCompileError(RuntimeError):
    """A graph could not be compiled; ``reproducer`` is a shell command, if one exists."""

    def __init__(self, stage: str, reason: str, reproducer: str = ""):
        self.stage = stage
        self.reason = reason
        self.reproducer = reproducer
        message = f"{stage}: {reason}"
        if reproducer:
            message += f"\n  reproduce with: {reproducer}"
        super().__init__(message)
