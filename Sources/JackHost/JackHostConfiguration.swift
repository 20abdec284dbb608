// Control side. What the JACK host opens: client name, server, ports and the connections to make.
import Foundation

/// How `JackHost` presents itself to a JACK server.
public struct JackHostConfiguration: Sendable {
    /// Requested JACK client name (at most 64 bytes of UTF-8). When it is taken, libjack renames the
    /// client (`soundstage-01`, …); `JackHostStartReport.actualClientName` has the name in force.
    public var clientName: String
    /// Server to connect to; nil means `$JACK_DEFAULT_SERVER`, else `"default"` (libjack's own rule).
    public var serverName: String?
    /// Playback ports `out_1…out_N` (1…256). The render engine writes one channel per port.
    public var outputChannelCount: Int
    /// Capture ports `in_1…in_N` (0…256); 0 registers none and the engine gets no inputs.
    public var inputChannelCount: Int
    /// Connects `out_i` to the i-th physical playback port after activation (a mono host feeds the
    /// first two physical ports).
    public var connectPhysicalOutputs: Bool
    /// Connections made after activation, in order. A name without ':' is one of our own ports
    /// (`"out_1"`, `"in_2"`); a name with ':' is a full JACK port name (`"system:playback_1"`). Each pair
    /// is source → destination; a pair given destination-first is swapped. A failed connection is
    /// reported in the start report and does not stop the host.
    public var connections: [(from: String, to: String)]
    /// After the server is lost, keep trying to open the client again (100 ms doubling to 2 s, and at once
    /// when the server's socket appears), then register every port and restore every connection our
    /// ports had, in both directions, whoever made it. Off: the host stays stopped after a loss.
    public var reconnectsAfterServerLoss: Bool

    public init(
        clientName: String = "soundstage", serverName: String? = nil, outputChannelCount: Int = 2,
        inputChannelCount: Int = 0, connectPhysicalOutputs: Bool = false,
        connections: [(from: String, to: String)] = [], reconnectsAfterServerLoss: Bool = false
    ) {
        self.reconnectsAfterServerLoss = reconnectsAfterServerLoss
        self.clientName = clientName
        self.serverName = serverName
        self.outputChannelCount = outputChannelCount
        self.inputChannelCount = inputChannelCount
        self.connectPhysicalOutputs = connectPhysicalOutputs
        self.connections = connections
    }

    /// The server name libjack will use for this configuration: `serverName`, else
    /// `$JACK_DEFAULT_SERVER` (when set and non-empty), else `"default"`.
    public var resolvedServerName: String {
        Self.resolveServerName(serverName)
    }

    /// `name`, else `$JACK_DEFAULT_SERVER` (when set and non-empty), else `"default"`.
    public static func resolveServerName(_ name: String?) -> String {
        if let name, !name.isEmpty { return name }
        if let env = ProcessInfo.processInfo.environment["JACK_DEFAULT_SERVER"], !env.isEmpty { return env }
        return "default"
    }

    /// The reconnect back-off: the first wait after a loss, doubled after each failed attempt up to the
    /// largest.
    public static let reconnectFirstDelay = 0.1
    public static let reconnectMaximumDelay = 2.0

    /// Largest channel count per direction.
    public static let maximumChannelCount = 256
}
