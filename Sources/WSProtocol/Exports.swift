// Header fields and UTF-8 validation are part of this module's API (handshakes take and answer
// `HeaderFields`; text messages are validated as they arrive); they live in `Portable` so that the
// Swift client builds them on Apple's platforms too.
@_exported import Portable
