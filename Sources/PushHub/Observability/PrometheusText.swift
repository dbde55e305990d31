/// The Prometheus text format (exposition 0.0.4), written one way: a family's `# HELP`/`# TYPE`
/// header, a one-sample family, and label values escaped so that a screen name or a version
/// cannot end the label early or break the line.
enum PrometheusText {
    static func header(_ name: String, _ type: String, _ help: String) -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    /// A family with one unlabelled sample.
    static func family(_ name: String, _ type: String, _ help: String, _ value: String) -> String {
        header(name, type, help) + "\(name) \(value)\n"
    }

    static func escaped(_ value: String) -> String {
        value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
    }
}
