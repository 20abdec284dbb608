// Dependencies run one way: every target's declared dependencies (Package.swift) and every `import` in
// its sources point to a lower layer of docs/ARCHITECTURE.md, and a source file imports only what its
// target declares.
import Foundation
import Testing

/// The layers of docs/ARCHITECTURE.md and the checks against them (pure functions, so the tests can
/// feed them a violating package as well as the real one).
enum ModuleLayering {
    /// Lowest first. A target may depend only on targets of lower layers: peers in one layer never
    /// import each other (the hosts, and the control-side libraries under the kit).
    static let layers: [[String]] = [
        // C shims, the control side's lock, and the package dependencies.
        [
            "CJack", "CSndFile", "CSoxr", "CFFmpeg", "CLibLo", "COSCSocket", "CRubberBand", "CMySofa", "CRealtime",
            "CAllocationCounter", "CProcessMemory", "CSpatialKernels", "CSpeexDSP", "Locking", "Yams", "ArgumentParser",
            "FlyingFox",
            "FlyingSocks"
        ],
        // Pure DSP kernels.
        ["AudioDSP"],
        // The graph, and the control-side libraries it knows nothing of; test helpers.
        ["AudioGraph", "SpatialAssets", "AudioFiles", "Patches", "DSPTestSupport"],
        // The glue that injects files, streams and HRTF sets into engines.
        ["SoundstageKit"],
        // Hosts and control adapters.
        ["OSCControl", "JackHost"],
        // The composition root.
        ["soundstage"]
    ]

    /// Modules that only test code may depend on.
    static let testOnly: Set<String> = ["DSPTestSupport", "CAllocationCounter"]

    /// The toolchain's test frameworks: test-only targets may import them without a declaration.
    static let testFrameworks: Set<String> = ["Testing", "XCTest"]

    /// Modules of the platform that need no declaration.
    static let systemModules: Set<String> = ["Glibc", "Darwin", "Dispatch", "Synchronization", "Foundation"]

    /// Targets that must not import Foundation (they stay honest about allocation; threads use Glibc,
    /// Dispatch and Synchronization).
    static let foundationFree: Set<String> = ["AudioDSP", "AudioGraph"]

    static func layer(of module: String) -> Int? { layers.firstIndex { $0.contains(module) } }

    /// A target's imports: the file and the module of each `import` line.
    struct Import: Equatable {
        var file: String
        var module: String
    }

    /// Every way `targets` (name → declared dependencies) and `imports` (name → its sources' imports)
    /// break the layering, in words; empty when they follow it.
    static func violations(targets: [String: [String]], imports: [String: [Import]]) -> [String] {
        var found: [String] = []
        for (target, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
            guard let level = layer(of: target) else {
                found.append("\(target) is in no layer of the table (place it in ModuleLayering.layers and the docs)")
                continue
            }
            for dependency in dependencies {
                if let other = layer(of: dependency), other >= level {
                    found.append("\(target) depends on \(dependency), which is not in a lower layer")
                } else if layer(of: dependency) == nil {
                    found.append("\(target) depends on \(dependency), which is in no layer")
                }
                if testOnly.contains(dependency) && !testOnly.contains(target) {
                    found.append("\(target) depends on \(dependency), which is for tests only")
                }
            }
            for line in imports[target] ?? [] {
                if systemModules.contains(line.module) {
                    if line.module == "Foundation" && foundationFree.contains(target) {
                        found.append("\(line.file) imports Foundation, which \(target) must not")
                    }
                    continue
                }
                if testFrameworks.contains(line.module) {
                    if !testOnly.contains(target) {
                        found.append("\(line.file) imports \(line.module), a test framework, outside the test helpers")
                    }
                    continue
                }
                if !dependencies.contains(line.module) {
                    found.append("\(line.file) imports \(line.module), which \(target) does not declare")
                }
                if let other = layer(of: line.module), other >= level {
                    found.append("\(line.file) imports \(line.module), which is not in a lower layer than \(target)")
                }
            }
        }
        return found
    }

    /// The modules a Swift source imports (`import X`, `@testable import X`, `import struct X.Y`);
    /// comments are ignored.
    static func importedModules(in source: String) -> [String] {
        var modules: [String] = []
        for rawLine in source.split(separator: "\n", omittingEmptySubsequences: false) {
            var words = rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            while let first = words.first, first.hasPrefix("@") { words.removeFirst() }
            guard words.first == "import", words.count >= 2 else { continue }
            let kinds: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "func", "let", "var", "actor"]
            let path = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
            if let module = path.split(separator: ".").first { modules.append(String(module)) }
        }
        return modules
    }

    /// The targets a manifest declares (`.target`, `.executableTarget`, `.systemLibrary`; test targets
    /// are left out) with their dependencies; a `.product(name:package:)` counts as its product's name.
    static func targets(inManifest manifest: String) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for opener in [".target(", ".executableTarget(", ".systemLibrary("] {
            var rest = manifest[...]
            while let start = rest.range(of: opener) {
                let call = balanced(rest[start.upperBound...], open: "(", close: ")")
                rest = rest[start.upperBound...]
                guard let name = firstQuoted(after: "name:", in: call) else { continue }
                var dependencies: [String] = []
                if let list = call.range(of: "dependencies:") {
                    var entries = call[list.upperBound...]
                    if let bracket = entries.firstIndex(of: "[") {
                        entries = balanced(entries[entries.index(after: bracket)...], open: "[", close: "]")
                    }
                    var text = entries
                    // `.product(name: "Y", package: "P")`: the module is Y, not P.
                    while let product = text.range(of: ".product(") {
                        let arguments = balanced(text[product.upperBound...], open: "(", close: ")")
                        if let productName = firstQuoted(after: "name:", in: arguments) {
                            dependencies.append(productName)
                        }
                        text = text[..<product.lowerBound] + text[arguments.endIndex...].dropFirst()
                    }
                    dependencies += quotedStrings(in: text)
                }
                result[name] = dependencies
            }
        }
        return result
    }

    /// The text after an opening bracket up to (not including) its matching closing bracket.
    private static func balanced(_ text: Substring, open: Character, close: Character) -> Substring {
        var depth = 1
        var inString = false
        for index in text.indices {
            let c = text[index]
            if c == "\"" { inString.toggle() }
            if inString { continue }
            if c == open { depth += 1 }
            if c == close {
                depth -= 1
                if depth == 0 { return text[..<index] }
            }
        }
        return text
    }

    private static func firstQuoted(after label: String, in text: Substring) -> String? {
        guard let labelRange = text.range(of: label) else { return nil }
        return quotedStrings(in: text[labelRange.upperBound...]).first
    }

    private static func quotedStrings(in text: Substring) -> [String] {
        text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
            .filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }
}

@Suite struct ModuleLayeringTests {
    @Test func thePackageFollowsTheLayers() throws {
        let manifest = try String(contentsOf: Fixtures.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let targets = ModuleLayering.targets(inManifest: manifest)
        // The manifest was read, not skipped.
        #expect(targets.count >= 20, "only \(targets.keys.sorted()) found in Package.swift")
        #expect(targets["AudioGraph"]?.contains("AudioDSP") == true)
        #expect(targets["soundstage"]?.contains("ArgumentParser") == true)

        var imports: [String: [ModuleLayering.Import]] = [:]
        let sources = Fixtures.root.appendingPathComponent("Sources")
        for target in targets.keys {
            let folder = sources.appendingPathComponent(target)
            guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil) else {
                continue
            }
            for case let file as URL in walker where file.pathExtension == "swift" {
                let text = try String(contentsOf: file, encoding: .utf8)
                let name = file.path.replacingOccurrences(of: Fixtures.root.path + "/", with: "")
                imports[target, default: []] += ModuleLayering.importedModules(in: text).map {
                    .init(file: name, module: $0)
                }
            }
        }
        #expect(imports["AudioGraph"]?.contains { $0.module == "AudioDSP" } == true, "no imports found in AudioGraph")
        let violations = ModuleLayering.violations(targets: targets, imports: imports)
        #expect(violations.isEmpty, "\(violations.joined(separator: "\n"))")
    }

    @Test func anArrowBackUpTheLayersIsFlagged() {
        let targets = [
            "AudioDSP": ["AudioGraph"], "AudioGraph": ["AudioDSP", "SpatialAssets"], "SpatialAssets": ["AudioDSP"],
            "SoundstageKit": ["AudioGraph", "DSPTestSupport"], "Mystery": []
        ]
        let imports: [String: [ModuleLayering.Import]] = [
            "AudioGraph": [
                .init(file: "Sources/AudioGraph/A.swift", module: "AudioDSP"),
                .init(file: "Sources/AudioGraph/A.swift", module: "Foundation"),
                .init(file: "Sources/AudioGraph/B.swift", module: "Glibc"),
                .init(file: "Sources/AudioGraph/B.swift", module: "AudioFiles")
            ],
            "SoundstageKit": [
                .init(file: "Sources/SoundstageKit/C.swift", module: "Foundation"),
                .init(file: "Sources/SoundstageKit/C.swift", module: "AudioDSP")
            ]
        ]
        let violations = Set(ModuleLayering.violations(targets: targets, imports: imports))
        #expect(
            violations == [
                "AudioDSP depends on AudioGraph, which is not in a lower layer",
                "AudioGraph depends on SpatialAssets, which is not in a lower layer",
                "Sources/AudioGraph/A.swift imports Foundation, which AudioGraph must not",
                "Sources/AudioGraph/B.swift imports AudioFiles, which AudioGraph does not declare",
                "Sources/AudioGraph/B.swift imports AudioFiles, which is not in a lower layer than AudioGraph",
                "SoundstageKit depends on DSPTestSupport, which is for tests only",
                "Sources/SoundstageKit/C.swift imports AudioDSP, which SoundstageKit does not declare",
                "Mystery is in no layer of the table (place it in ModuleLayering.layers and the docs)"
            ])
    }

    @Test func manifestsAndImportsAreReadAsSwiftPMAndSwiftDo() {
        let manifest = """
            .target(name: "Low"),
            .target(name: "Mid", dependencies: ["Low", .product(name: "Yams", package: "Yams")]),
            .executableTarget(
                name: "top",
                dependencies: [
                    "Mid", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                ]
            ),
            .systemLibrary(name: "CThing", pkgConfig: "thing", providers: [.apt(["libthing-dev"])]),
            .testTarget(name: "MidTests", dependencies: ["Mid"]),
            """
        #expect(
            ModuleLayering.targets(inManifest: manifest) == [
                "Low": [], "Mid": ["Yams", "Low"], "top": ["ArgumentParser", "Mid"], "CThing": []
            ])
        let source = """
            // import Commented
            import AudioDSP
            @testable import AudioGraph
            @preconcurrency import struct Locking.Locked
            #if canImport(Glibc)
              import Glibc
            #endif
            let important = 1
            """
        #expect(ModuleLayering.importedModules(in: source) == ["AudioDSP", "AudioGraph", "Locking", "Glibc"])
    }
}
