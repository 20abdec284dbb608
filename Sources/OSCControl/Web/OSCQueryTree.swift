// Pure. The OSCQuery namespace (Vidvox's proposal) of a running engine: every node with its parameters
// and methods, the session's values and the engine's addresses, as one tree of JSON attributes.
import AudioGraph
import Foundation

/// A JSON value with a deterministic encoding (keys sorted).
indirect enum OSCQueryJSON: Equatable, Sendable {
    case string(String)
    case number(Double)
    case integer(Int)
    case bool(Bool)
    case null
    case array([OSCQueryJSON])
    case object([String: OSCQueryJSON])

    /// The value for `JSONSerialization` (non-finite numbers become null).
    var foundationValue: Any {
        switch self {
        case .string(let s): return s
        case .number(let d): return d.isFinite ? d as Any : NSNull()
        case .integer(let i): return i
        case .bool(let b): return b
        case .null: return NSNull()
        case .array(let a): return a.map(\.foundationValue)
        case .object(let o): return o.mapValues(\.foundationValue)
        }
    }

    /// UTF-8 JSON text, keys sorted.
    var encoded: Data {
        (try? JSONSerialization.data(
            withJSONObject: foundationValue, options: [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]))
            ?? Data("null".utf8)
    }

    /// A float as its shortest decimal (a Float's 0.8 stays 0.8, not 0.800000011920929).
    static func float(_ value: Float) -> OSCQueryJSON { .number(Double("\(value)") ?? Double(value)) }

    /// An OSC argument as an OSCQuery VALUE item.
    init(_ argument: OSCArgument) {
        switch argument {
        case .int32(let v): self = .integer(Int(v))
        case .int64(let v): self = .integer(Int(v))
        case .float(let v): self = Self.float(v)
        case .double(let v): self = .number(v)
        case .string(let s), .symbol(let s): self = .string(s)
        case .bool(let b): self = .bool(b)
        default: self = .null
        }
    }

    init(_ value: ParameterValue) {
        switch value {
        case .float(let v): self = .number(v)
        case .int(let v): self = .integer(v)
        case .bool(let b): self = .bool(b)
        case .string(let s): self = .string(s)
        }
    }
}

/// One OSCQuery node: its attributes (`TYPE`, `VALUE`, `RANGE`, `ACCESS`, `DESCRIPTION`…) and children.
struct OSCQueryNode: Equatable, Sendable {
    var fullPath: String
    var attributes: [String: OSCQueryJSON] = [:]
    var contents: [String: OSCQueryNode] = [:]

    /// OSCQuery ACCESS values.
    enum Access: Int {
        case none = 0, read = 1, write = 2, readWrite = 3
    }

    init(fullPath: String, description: String? = nil) {
        self.fullPath = fullPath
        if let description { attributes["DESCRIPTION"] = .string(description) }
    }

    /// The node's JSON object: `FULL_PATH`, its attributes and `CONTENTS`.
    var json: OSCQueryJSON {
        var object = attributes
        object["FULL_PATH"] = .string(fullPath)
        if !contents.isEmpty { object["CONTENTS"] = .object(contents.mapValues(\.json)) }
        return .object(object)
    }

    /// The node at `path` below this one ("/" or "" is this node).
    func find(_ path: String) -> OSCQueryNode? {
        var node = self
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            guard let next = node.contents[String(part)] else { return nil }
            node = next
        }
        return node
    }

    /// Puts `leaf` at its full path (below this node's), making containers on the way.
    mutating func insert(_ leaf: OSCQueryNode) {
        let base = fullPath == "/" ? "" : fullPath
        guard leaf.fullPath.hasPrefix(base + "/") else { return }
        let parts = leaf.fullPath.dropFirst(base.count).split(separator: "/").map(String.init)
        insert(leaf, parts: parts[...], prefix: base)
    }

    private mutating func insert(_ leaf: OSCQueryNode, parts: ArraySlice<String>, prefix: String) {
        guard let first = parts.first else { return }
        let path = prefix + "/" + first
        if parts.count == 1 {
            var merged = leaf
            if let existing = contents[first] { merged.contents = existing.contents }
            contents[first] = merged
            return
        }
        var child = contents[first] ?? OSCQueryNode(fullPath: path)
        child.insert(leaf, parts: parts.dropFirst(), prefix: path)
        contents[first] = child
    }
}

/// What the namespace is made of, gathered on the OSC thread.
struct OSCQuerySource {
    var nodes: [NodeInfo]
    /// The exact-match addresses the service serves.
    var routes: [String]
    /// `/session/params` as it would reply, and `/session/state`.
    var sessionValues: [(name: String, value: OSCArgument)]
    var sessionState: String
    /// Node name → its method tails (`play`, `listener/position`…), as liblo registers them.
    var nodeMethods: (String, NodeKind) -> [String]
}

enum OSCQueryTree {
    /// The whole namespace.
    static func build(_ source: OSCQuerySource) -> OSCQueryNode {
        var root = OSCQueryNode(fullPath: "/", description: "Soundstage: the OSC address space (docs/OSC.md)")
        root.attributes["ACCESS"] = .integer(OSCQueryNode.Access.none.rawValue)
        let sessionNames = Set(source.sessionValues.map(\.name))
        for route in source.routes.sorted() where !isSessionValue(route, sessionNames) {
            var leaf = OSCQueryNode(fullPath: route, description: OSCQueryDescriptions.routes[route] ?? route)
            leaf.attributes["ACCESS"] = .integer(OSCQueryNode.Access.write.rawValue)
            root.insert(leaf)
        }
        for (name, value) in source.sessionValues {
            root.insert(sessionLeaf(name, value, settable: source.routes.contains("/session/\(name)")))
        }
        var state = OSCQueryNode(
            fullPath: "/session/state",
            description: "The audio session's state: active, inactive, interrupted or suspended.")
        state.attributes["TYPE"] = .string("s")
        state.attributes["VALUE"] = .array([.string(source.sessionState)])
        state.attributes["ACCESS"] = .integer(OSCQueryNode.Access.read.rawValue)
        state.attributes["RANGE"] = .array([
            .object(["VALS": .array(["active", "inactive", "interrupted", "suspended"].map { .string($0) })])
        ])
        root.insert(state)
        for info in source.nodes.sorted(by: { $0.name < $1.name }) {
            root.insert(node(info, methods: source.nodeMethods(info.name, info.kind)))
        }
        if root.contents["node"] != nil {
            root.contents["node"]?.attributes["DESCRIPTION"] = .string("The engine's nodes, by name.")
        }
        return root
    }

    private static func isSessionValue(_ route: String, _ names: Set<String>) -> Bool {
        route.hasPrefix("/session/") && names.contains(String(route.dropFirst("/session/".count)))
            || route == "/session/state"
    }

    /// A node's container: its parameters as values, its methods as leaves.
    static func node(_ info: NodeInfo, methods: [String]) -> OSCQueryNode {
        let base = "/node/\(info.name)"
        var container = OSCQueryNode(fullPath: base, description: "\(info.kind.rawValue) node")
        container.attributes["KIND"] = .string(info.kind.rawValue)
        container.attributes["ACCESS"] = .integer(OSCQueryNode.Access.none.rawValue)
        let specs = info.kind.parameters(
            bandCount: info.parameters["bands"]?.intValue ?? NodeKind.defaultEQBandCount)
        for spec in specs {
            container.insert(parameter(spec, value: info.parameters[spec.name] ?? spec.defaultValue, base: base))
        }
        // The method list names the kind's default parameters too (an EQ's four bands): they are not methods.
        let parameterNames = Set(specs.map(\.name)).union(info.kind.parameters.map(\.name))
        for tail in methods.map({ String($0.dropFirst(base.count + 1)) }) where !parameterNames.contains(tail) {
            var leaf = OSCQueryNode(
                fullPath: "\(base)/\(tail)", description: OSCQueryDescriptions.nodeMethods[tail] ?? tail)
            if let type = OSCQueryDescriptions.nodeMethodTypes[tail] { leaf.attributes["TYPE"] = .string(type) }
            leaf.attributes["ACCESS"] = .integer(
                tail == "params" || tail == "power"
                    ? OSCQueryNode.Access.none.rawValue : OSCQueryNode.Access.write.rawValue)
            container.insert(leaf)
        }
        return container
    }

    /// A parameter as an OSCQuery value: its OSC type, value, range, access, unit and description.
    static func parameter(_ spec: ParameterSpec, value: ParameterValue, base: String) -> OSCQueryNode {
        var leaf = OSCQueryNode(fullPath: "\(base)/\(spec.name)", description: spec.summary)
        let type: String
        switch spec.type {
        case .float: type = "f"
        case .int: type = "i"
        case .bool: type = "T"
        case .string: type = "s"
        }
        leaf.attributes["TYPE"] = .string(type)
        leaf.attributes["VALUE"] = .array([OSCQueryJSON(value)])
        let fixed = spec.isReadOnly || spec.isCreationOnly
        leaf.attributes["ACCESS"] = .integer(
            fixed ? OSCQueryNode.Access.read.rawValue : OSCQueryNode.Access.readWrite.rawValue)
        if !spec.choices.isEmpty {
            leaf.attributes["RANGE"] = .array([.object(["VALS": .array(spec.choices.map { .string($0) })])])
        } else if spec.type == .int || spec.type == .float, spec.minimum != nil || spec.maximum != nil {
            var range: [String: OSCQueryJSON] = [:]
            func bound(_ v: Double) -> OSCQueryJSON {
                spec.type == .int ? .integer(Int(clamping: Int64(v))) : .number(v)
            }
            if let minimum = spec.minimum { range["MIN"] = bound(minimum) }
            if let maximum = spec.maximum { range["MAX"] = bound(maximum) }
            leaf.attributes["RANGE"] = .array([.object(range)])
        }
        if !spec.unit.isEmpty { leaf.attributes["UNIT"] = .array([.string(spec.unit)]) }
        return leaf
    }

    /// A session value (`/session/params`): read-write when its address sets it.
    static func sessionLeaf(_ name: String, _ value: OSCArgument, settable: Bool) -> OSCQueryNode {
        var leaf = OSCQueryNode(
            fullPath: "/session/\(name)", description: OSCQueryDescriptions.sessionValues[name] ?? name)
        leaf.attributes["TYPE"] = .string(String(value.typeTag))
        leaf.attributes["VALUE"] = .array([OSCQueryJSON(value)])
        leaf.attributes["ACCESS"] = .integer(
            settable ? OSCQueryNode.Access.readWrite.rawValue : OSCQueryNode.Access.read.rawValue)
        switch name {
        case "category":
            leaf.attributes["RANGE"] = .array([
                .object(["VALS": .array(SessionCategory.allCases.map { .string($0.rawValue) })])
            ])
        case "mode":
            leaf.attributes["RANGE"] = .array([
                .object(["VALS": .array(SessionMode.allCases.map { .string($0.rawValue) })])
            ])
        case "duckLevel":
            leaf.attributes["RANGE"] = .array([.object(["MIN": .number(-120), "MAX": .number(0)])])
            leaf.attributes["UNIT"] = .array([.string("dB")])
        case "preferredIOBufferDuration":
            leaf.attributes["RANGE"] = .array([.object(["MIN": .number(0), "MAX": .number(1)])])
            leaf.attributes["UNIT"] = .array([.string("s")])
        case "preferredSampleRate":
            leaf.attributes["RANGE"] = .array([.object(["MIN": .number(8000), "MAX": .number(384_000)])])
            leaf.attributes["UNIT"] = .array([.string("Hz")])
        default:
            if case .int32 = value {
                leaf.attributes["RANGE"] = .array([.object(["MIN": .integer(0), "MAX": .integer(1)])])
            }
        }
        return leaf
    }

    /// `GET /?HOST_INFO`: the OSC server this namespace belongs to and the extensions served.
    static func hostInfo(name: String, oscPort: Int, oscHost: String) -> OSCQueryJSON {
        let extensions = [
            "ACCESS": true, "VALUE": true, "RANGE": true, "DESCRIPTION": true, "UNIT": true, "TAGS": false,
            "EXTENDED_TYPE": false, "CLIPMODE": false, "CRITICAL": false, "OVERLOADS": false, "HTML": true,
            "LISTEN": true, "PATH_CHANGED": false, "PATH_RENAMED": false, "PATH_ADDED": true, "PATH_REMOVED": true
        ]
        return .object([
            "NAME": .string(name), "OSC_PORT": .integer(oscPort), "OSC_TRANSPORT": .string("UDP"),
            "OSC_IP": .string(oscHost), "EXTENSIONS": .object(extensions.mapValues { .bool($0) })
        ])
    }
}
