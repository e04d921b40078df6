"""An adapter module that hangs while it is imported, as a third-party
adapter waiting on a lock or a licence server would: the worker never starts.
The engine must give up after its start-up bound, not wait minutes."""

import time

time.sleep(3600)
