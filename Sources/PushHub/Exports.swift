// Modules the hub is built on and that its users need too, re-exported so that the hub's files
// and everything built on `PushHub` see their types as before they were split out:
// `ScreenTree` (the JSON model, patches and hashes, shared with the Swift client) and `Sockets`
// (addresses and errno errors, shared with the tools' blocking sockets).
@_exported import ScreenTree
@_exported import Sockets
