"""The progress bar the commands draw on the terminal (or write to a log), one per step."""

from __future__ import annotations

from typing import TextIO

BAR_WIDTH = 30


class ProgressBar:
    """A text progress bar on ``stream``: redrawn in place (``\\r``) on a terminal, one line
    per step elsewhere (a log file, a CI job) — per message with ``every_message`` (a
    streamed audit: a line per partition)."""

    def __init__(self, stream: TextIO, label: str, every_message: bool = False) -> None:
        self.stream, self.label, self.every_message = stream, label, every_message
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.last_message = ""
        self.last_fraction = -1.0
        self.drawn = False

    def __call__(self, fraction: float, message: str) -> None:
        fraction = min(max(float(fraction), 0.0), 1.0)
        filled = round(BAR_WIDTH * fraction)
        bar = f"{self.label} [{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {fraction:4.0%} "
        if self.tty:
            self.stream.write("\r" + (bar + message)[:110].ljust(110))
            self.drawn = True
        elif (message.split(":")[0] != self.last_message.split(":")[0]
              or fraction - self.last_fraction >= 0.1 or fraction == 1.0
              or (self.every_message and message != self.last_message)):
            # a log gets one line per step, or per tenth of the way
            self.stream.write(bar + message + "\n")
            self.last_fraction = fraction
        self.last_message = message
        self.stream.flush()

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False

