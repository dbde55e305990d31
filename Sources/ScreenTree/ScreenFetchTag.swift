/// The `ETag` of an HTTP fetch of a screen (docs/protocol.md "HTTP fetch"): the tree's hash,
/// followed, when the client is in variants, by "." and the first 16 hex digits of the SHA-256 of
/// their RFC 8785 form — so a change of variants alone (a control group joining or leaving) is not
/// answered 304. The hub answers it; the SDKs send it for what they stored.
public enum ScreenFetchTag {
    public static func of(hash: String, variants: JSONObject) -> String {
        variants.isEmpty ? hash : hash + "." + ScreenHash.of(.object(variants)).prefix(16)
    }
}
