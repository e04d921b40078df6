"""The JavaScript side of the onnxruntime-web targets (``conformance/adapters/ortweb.py``):
``package.json`` and ``package-lock.json`` (onnxruntime-web and puppeteer-core,
pinned), ``runner.mjs``, ``handler.mjs`` and ``page.html``; :mod:`.install`
puts the packages in a cache folder with ``npm ci`` (docs/browser.md)."""
