"""The driver of the app `clawmem serve` runs for one browser tab: Textual's web driver, plus
a guarantee that the app ends with its session.

Textual's web driver keeps the app running when its input ends (the serving process died or
dropped the session): an app nobody can see again, holding the index and sync threads. Here
the end of input, or the server's "quit", asks the app to exit as SIGTERM does, and if the app
has not gone within a few seconds (a busy sync, a stuck thread) the process ends anyway: its
writes are atomic renames and SQLite transactions, which a hard exit cannot tear.
"""

from __future__ import annotations

import os
import signal
import threading

from textual.drivers.web_driver import WebDriver

GRACE_SECONDS = 5.0


def _exit_soon() -> None:
    timer = threading.Timer(GRACE_SECONDS, os._exit, args=(0,))
    timer.daemon = True  # a clean exit before then is not held up
    timer.start()


class SessionDriver(WebDriver):
    def run_input_thread(self) -> None:
        super().run_input_thread()
        if not self.exit_event.is_set():  # input ended without the app stopping: the session is gone
            os.kill(os.getpid(), signal.SIGTERM)  # the web driver's own handler asks the app to exit
            _exit_soon()

    def on_meta(self, packet_type: str, payload: dict[str, object]) -> None:
        super().on_meta(packet_type, payload)
        if packet_type == "quit":  # the browser's socket closed
            _exit_soon()
