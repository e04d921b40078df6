"""An adapter module that starts a thread of its own as it is imported, as
ONNX Runtime does on some machines and a third-party module may: forking that
process is not safe, so its workers must start directly."""

import threading
import time

from tests.faulty_adapter import FaultyAdapter

threading.Thread(target=time.sleep, args=(3600,), name="busy at import", daemon=True).start()


class ThreadedAdapter(FaultyAdapter):
    name = "threaded"
