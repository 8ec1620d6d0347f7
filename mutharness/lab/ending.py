"""How a command's lab work ended: the signal that interrupted it, or the error that stopped it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mutharness.errors import Interrupted, MutharnessError, OSProblem


@dataclass
class Ending:
    """Filled in by `recorded`: nothing when the work ran to its end."""

    interrupted: int | None = None  # the signal number
    error: MutharnessError | None = None


@contextmanager
def recorded(ending: Ending, doing: Callable[[], str]) -> Iterator[None]:
    """Run the block; a signal or an error (an OSError named with what was being `doing()`)
    ends it and is recorded in `ending` instead of raised, so the results can be written."""
    try:
        yield
    except KeyboardInterrupt:
        ending.interrupted = 2
    except Interrupted as signal_error:
        ending.interrupted = signal_error.signal_number
    except MutharnessError as failure:
        ending.error = failure
    except OSError as failure:
        ending.error = OSProblem.from_error(failure, doing())
