"""The Bark worker: wire formats, executor and servers. Never imports `maned`."""
