// Durations in nanoseconds and seconds (socket timeouts) and the reconnect `Backoff` are part of
// this module's API; they live in `Portable` so that the Swift client builds them on Apple's
// platforms too.
@_exported import Portable
