extension Gateway {
    /// HomeGate's version: `homegate --version`, `homegate_build_info{version}` on `/metrics`,
    /// and the `origin` of the Home Assistant discovery configs.
    public static let version = "0.1.0"
}
