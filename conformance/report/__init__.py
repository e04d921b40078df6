"""The HTML report: :mod:`.view` reads run folders into plain data,
:mod:`.render` puts it through the Jinja2 template (autoescaping on)."""
