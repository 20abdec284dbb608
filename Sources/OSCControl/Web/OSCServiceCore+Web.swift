// OSC thread. The web server's side of the address space: OSC packets from WebSockets dispatched
// like UDP datagrams, OSCQuery requests answered from the live engine, LISTEN values and
// PATH_ADDED/PATH_REMOVED sent to the sockets.
import AudioGraph
import CLibLo
import Foundation

extension OSCServiceCore {
    func handleWeb(_ item: WebInboxItem) {
        switch item {
        case .opened(let client):
            web.clients[client.id] = client
        case .packet(let client, let bytes):
            guard web.clients[client.id] != nil else { return }
            receiveWebPacket(client, bytes)
        case .text(let client, let text):
            guard web.clients[client.id] != nil else { return }
            receiveWebCommand(client, text)
        case .closed(let client):
            web.clients[client.id] = nil
            web.listens[client.id] = nil
            web.sent[client.id] = nil
            let own = SubscriberAddress.web(client).url
            for (id, subscription) in subscriptions.byID where subscription.address.url == own {
                removeSubscription(id)
            }
        case .query(let query):
            query.answer(answer(query))
        }
    }

    /// A binary frame: screened like a UDP datagram (size, OSC validity, and for a read-only server
    /// whether it would change anything), then dispatched by liblo with the socket as the sender.
    private func receiveWebPacket(_ client: WebClient, _ bytes: [UInt8]) {
        counters.packets.add(1)
        let ref = ClientRef(key: client.key, target: .web(client))
        guard let packet = bytes.withUnsafeBytes({ screened($0, from: ref) }) else { return }
        if client.isReadOnly,
            let refused = packet.messages.first(where: {
                !WebReadOnly.allows($0.message.address, argumentCount: $0.message.arguments.count)
            })
        {
            sendError(
                ref, address: OSCText.sanitized(refused.message.address),
                OSCFailure(
                    .notAllowed,
                    "the web server is read-only (--http-read-only): \(OSCText.sanitized(refused.message.address)) "
                        + "would change the engine; nothing in the packet was applied"))
            return
        }
        dispatch.udpClient = ref
        bytes.withUnsafeBytes { raw in
            _ = lo_server_dispatch_data(endpoint.udp, UnsafeMutableRawPointer(mutating: raw.baseAddress), raw.count)
        }
        dispatch.udpClient = nil
        finishDispatch(client: ref)
    }

    /// A text frame: `{"COMMAND":"LISTEN"|"IGNORE","DATA":"/osc/address"}`.
    private func receiveWebCommand(_ client: WebClient, _ text: String) {
        let ref = ClientRef(key: client.key, target: .web(client))
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let command = object["COMMAND"] as? String, let path = object["DATA"] as? String
        else {
            sendError(
                ref, address: "",
                OSCFailure(
                    .badArguments,
                    "a text frame must be {\"COMMAND\":\"LISTEN\" or \"IGNORE\",\"DATA\":\"/osc/address\"}"))
            return
        }
        switch command {
        case "LISTEN":
            guard let value = listenedValue(path, nodes: engine.nodes()) else {
                sendError(
                    ref, address: OSCText.sanitized(path),
                    OSCFailure(.unknownAddress, "no value at '\(OSCText.sanitized(path))' to listen to"))
                return
            }
            web.listens[client.id, default: []].insert(path)
            // The value as it is now, so a listener starts from the truth.
            web.sent[client.id, default: [:]][path] = value
            client.send(.binary(OSCPacket.message(OSCMessage(path, value)).encoded()))
            web.nextListenCheck = min(web.nextListenCheck, SystemClock.monotonicSeconds())
        case "IGNORE":
            web.listens[client.id]?.remove(path)
            web.sent[client.id]?[path] = nil
            if web.listens[client.id]?.isEmpty == true { web.listens[client.id] = nil }
        default:
            sendError(
                ref, address: "",
                OSCFailure(.unsupported, "unknown OSCQuery command '\(OSCText.sanitized(command))' (LISTEN, IGNORE)"))
        }
    }

    /// Sends every listened value that changed since it was last sent.
    func sendListenedValues(now: Double) {
        web.nextListenCheck = now + WebState.listenInterval
        let nodes = engine.nodes()
        for (id, paths) in web.listens {
            guard let client = web.clients[id] else { continue }
            for path in paths.sorted() {
                let value = listenedValue(path, nodes: nodes)
                guard let value, web.sent[id]?[path] != value else { continue }
                web.sent[id, default: [:]][path] = value
                client.send(.binary(OSCPacket.message(OSCMessage(path, value)).encoded()))
            }
        }
    }

    /// The value at an OSCQuery path: a node parameter or a session value (nil: none there).
    private func listenedValue(_ path: String, nodes: [NodeInfo]) -> [OSCArgument]? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 4, parts[1] == "node", let info = nodes.first(where: { $0.name == parts[2] }) {
            let name = String(parts[3])
            let specs = info.kind.parameters(
                bandCount: info.parameters["bands"]?.intValue ?? NodeKind.defaultEQBandCount)
            guard let spec = specs.first(where: { $0.name == name }) else { return nil }
            return [OSCArgument(info.parameters[name] ?? spec.defaultValue)]
        }
        if path == "/session/state" { return [.string(sessionName)] }
        if parts.count == 3, parts[1] == "session",
            let value = sessionParameters.first(where: { $0.0 == parts[2] })?.1
        {
            return [value]
        }
        return nil
    }

    /// Tells every socket that an address appeared or went (OSCQuery PATH_ADDED / PATH_REMOVED).
    func announceWebPath(_ command: String, _ path: String) {
        guard !web.clients.isEmpty else { return }
        let text = String(
            decoding: OSCQueryJSON.object(["COMMAND": .string(command), "DATA": .string(path)]).encoded, as: UTF8.self)
        for client in web.clients.values { client.send(.text(text)) }
        if command == "PATH_REMOVED" {
            for id in web.listens.keys {
                web.listens[id] = web.listens[id]?.filter { !$0.hasPrefix(path + "/") }
                web.sent[id] = web.sent[id]?.filter { !$0.key.hasPrefix(path + "/") }
            }
        }
    }

    /// The namespace as it is now.
    func queryTree() -> OSCQueryNode {
        OSCQueryTree.build(
            OSCQuerySource(
                nodes: engine.nodes(), routes: Array(Self.routes.keys),
                sessionValues: sessionParameters.map { (name: $0.0, value: $0.1) },
                sessionState: sessionName,
                nodeMethods: { Self.nodeMethodPaths($0, kind: $1) }))
    }

    private func answer(_ query: WebQuery) -> WebQueryAnswer {
        if query.attribute == "HOST_INFO" {
            let name = host.map { "soundstage \($0.status().clientName)" } ?? "soundstage"
            return WebQueryAnswer(
                status: 200,
                json: OSCQueryTree.hostInfo(name: name, oscPort: endpoint.port, oscHost: options.host).encoded)
        }
        guard let node = queryTree().find(query.path) else {
            return WebQueryAnswer(
                status: 404, json: OSCQueryJSON.object(["ERROR": .string("no OSC address \(query.path)")]).encoded)
        }
        guard let attribute = query.attribute else { return WebQueryAnswer(status: 200, json: node.json.encoded) }
        if attribute == "FULL_PATH" {
            return WebQueryAnswer(status: 200, json: OSCQueryJSON.object(["FULL_PATH": .string(node.fullPath)]).encoded)
        }
        if attribute == "CONTENTS" {
            return WebQueryAnswer(
                status: 200, json: OSCQueryJSON.object(["CONTENTS": .object(node.contents.mapValues(\.json))]).encoded)
        }
        guard OSCQueryNode.attributeNames.contains(attribute) else {
            return WebQueryAnswer(
                status: 400,
                json: OSCQueryJSON.object(["ERROR": .string("OSCQuery defines no attribute \(attribute)")]).encoded)
        }
        guard let value = node.attributes[attribute] else { return WebQueryAnswer(status: 204, json: Data()) }
        return WebQueryAnswer(status: 200, json: OSCQueryJSON.object([attribute: value]).encoded)
    }
}

extension OSCQueryNode {
    /// The attributes a query string may ask for.
    static let attributeNames: Set<String> = [
        "TYPE", "VALUE", "RANGE", "ACCESS", "DESCRIPTION", "UNIT", "TAGS", "EXTENDED_TYPE", "CLIPMODE", "CRITICAL",
        "KIND"
    ]
}

/// What a read-only web server lets through: queries, getters and subscriptions.
enum WebReadOnly {
    static let queries: Set<String> = [
        "/ping", "/status", "/status/memory", "/status/realtime", "/version", "/sync", "/node/list", "/node/kinds",
        "/graph/list", "/buffer/list", "/recorder/list", "/sched/list", "/session/params", "/session/route",
        "/session/state", "/session/otherAudioPlaying", "/notify", "/renew", "/meters"
    ]
    /// Addresses that set with arguments and get without.
    static let getters: Set<String> = [
        "/session/pauseOnRouteLoss", "/session/preferredIOBufferDuration", "/session/preferredSampleRate",
        "/session/nowPlaying", "/session/category", "/session/mode", "/session/mixWithOthers", "/session/duckOthers",
        "/session/interruptSpokenAudioAndMixWithOthers", "/session/duckLevel", "/session/silentSwitch",
        "/session/monitorOtherAudio"
    ]
    static let nodeReads: Set<String> = ["params", "power", "lastRenderTime", "playerTime"]
    /// Node tails that act even without arguments.
    static let nodeCommands: Set<String> = [
        "play", "pause", "stop", "prepare", "reset", "fade", "enqueue", "schedule/buffer", "schedule/file", "position",
        "velocity", "direction", "listener/position", "listener/orientation", "file"
    ]

    static func allows(_ address: String, argumentCount: Int) -> Bool {
        if queries.contains(address) { return true }
        if getters.contains(address) { return argumentCount == 0 }
        return nodeOrRecorder(address, argumentCount: argumentCount)
    }

    private static func nodeOrRecorder(_ address: String, argumentCount: Int) -> Bool {
        let parts = address.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 4, parts[0].isEmpty else { return false }
        let tail = parts[3...].joined(separator: "/")
        switch parts[1] {
        case "node": return nodeReads.contains(tail) || (argumentCount == 0 && !nodeCommands.contains(tail))
        case "recorder": return tail == "status" || tail == "power"
        default: return false
        }
    }
}
