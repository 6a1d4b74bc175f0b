"""The resource handlers, one module per verb family (see :mod:`kstore.server.routes`)."""
