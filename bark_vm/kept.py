"""What was made last from each of N objects, by the object's identity: the object is held,
so its id stays its own. Thread-safe; a forked pool process gets its own lock, since
another thread may hold this one at the fork (a forked worker child likewise)."""
import os
import threading
from collections import OrderedDict
from typing import Callable


class Kept:
    def __init__(self, size: int):
        self.size, self._lock, self._known = size, threading.Lock(), OrderedDict()
        os.register_at_fork(after_in_child=self._fresh_lock)

    def _fresh_lock(self) -> None:
        self._lock = threading.Lock()

    def of(self, source, make: Callable):
        """make(source), or what it gave the last time for this very object."""
        key = id(source)
        with self._lock:
            held = self._known.get(key)
            if held is not None and held[0] is source:
                self._known.move_to_end(key)
                return held[1]
        made = make(source)
        with self._lock:
            self._known[key] = (source, made)
            if len(self._known) > self.size:
                self._known.popitem(last=False)
        return made
