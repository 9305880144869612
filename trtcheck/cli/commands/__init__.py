"""One module per command, each a click command over a job of ``execution/`` (or a record of
``results/``) whose reports go through :func:`trtcheck.cli.common.finish`."""
