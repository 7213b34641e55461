/// The PC's answer to a phone's hello: `{"HANDSHAKE":{...}}`, sent to the phone's address.
/// The keys are those public PoseAI receivers send; a touch receiver asks for the compact packet
/// format and the camera's frame rate.
public enum PoseAIHandshake {
    public static func reply(version: String) -> [UInt8] {
        let json = """
            {"HANDSHAKE":{"name":"touchbridge","rig":"UE4","mode":"Room","mirror":"NO","syncFPS":60,\
            "cameraFPS":60,"packetFormat":1,"signature":"","whoami":"touchbridge \(version)"}}
            """
        return Array(json.utf8)
    }
}
