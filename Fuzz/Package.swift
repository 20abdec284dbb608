// swift-tools-version:6.1
// Soundstage fuzzers: libFuzzer harnesses for the paths that read untrusted bytes. A package of its own
// (like Benchmarks), built with the fuzzer sanitizer by Fuzz/run.sh; not part of the main build or CI.
import PackageDescription

let package = Package(
    name: "SoundstageFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Soundstage", path: "..")
    ],
    targets: [
        // File open, header parse and decode (libsndfile, FFmpeg, our gapless bookkeeping, the stream
        // reader) on arbitrary bytes under every extension we dispatch on.
        .executableTarget(
            name: "FileDecodeFuzzer",
            dependencies: [.product(name: "AudioFiles", package: "Soundstage")],
            path: "FileDecodeFuzzer"
        )
    ]
)
