extension Accessory {
    /// Whether the accessory is a camera: it has a Camera RTP Stream Management service (HAP's
    /// mark of a camera; such an accessory answers `POST /resource` with a still image).
    public var isCamera: Bool {
        services.contains { $0.type == Self.cameraStreamServiceType }
    }

    /// The service type every HAP camera has.
    public static let cameraStreamServiceType = "camera-rtp-stream-management"
}
