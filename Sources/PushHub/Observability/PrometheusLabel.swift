/// A label value in the Prometheus text format (exposition 0.0.4): `\`, `"` and line feeds
/// escaped, so that a screen name or a version cannot end the label early or break the line.
enum PrometheusLabel {
    static func escaped(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
}
