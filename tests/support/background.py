"""A call left running on a thread while the test goes on (a client that waits on a held
job, a connection that trickles), its outcome collected later."""
import threading


def in_background(fn, *args):
    """fn(*args) on a thread; .result() waits for it (re-raising what it raised)."""
    box = {}

    def run():
        try:
            box["value"] = fn(*args)
        except BaseException as e:  # handed to the waiting test
            box["error"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()

    class Pending:
        @staticmethod
        def result(timeout=120):
            t.join(timeout)
            assert not t.is_alive(), "a background call never returned"
            if "error" in box:
                raise box["error"]
            return box["value"]
    return Pending()
