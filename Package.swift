// swift-tools-version:6.1
// Soundstage: a headless audio engine for Linux (JACK + OSC), GPL-3.0-or-later.
import PackageDescription

let package = Package(
    name: "Soundstage",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "soundstage", targets: ["soundstage"]),
        .library(name: "AudioGraph", targets: ["AudioGraph"]),
        .library(name: "AudioFiles", targets: ["AudioFiles"]),
        .library(name: "SoundstageKit", targets: ["SoundstageKit"]),
        .library(name: "OSCControl", targets: ["OSCControl"]),
        .library(name: "AudioDSP", targets: ["AudioDSP"]),
        .library(name: "SpatialAssets", targets: ["SpatialAssets"])
    ],
    dependencies: [
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1")
    ],
    targets: [
        // System libraries (Debian -dev packages; scripts/setup.sh installs them).
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswresample-dev"])]),
        .systemLibrary(name: "CLibLo", pkgConfig: "liblo", providers: [.apt(["liblo-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband", providers: [.apt(["librubberband-dev"])]),
        .systemLibrary(name: "CMySofa", pkgConfig: "libmysofa", providers: [.apt(["libmysofa-dev"])]),
        .systemLibrary(name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),
        // The control side's lock (a POSIX mutex the thread sanitizer understands).
        .target(name: "Locking"),
        // Tiny C helpers.
        .target(name: "CRealtime"),
        .target(name: "CAllocationCounter"),
        .target(name: "CProcessMemory"),
        .target(name: "COSCSocket", linkerSettings: [.linkedLibrary("lo")]),
        // AVX2/FMA inner loops of the 3D mixer, chosen at run time.
        .target(name: "CSpatialKernels"),
        // Pure DSP kernels: no Foundation, no I/O (Rubber Band for the time-pitch kernel, SpeexDSP's echo
        // canceller for the voice processor). Optimised in debug builds too: the kernels render in real
        // time under the test suites and the sanitizers, and their SIMD loops would otherwise run as
        // generic calls (docs/DECISIONS.md).
        .target(
            name: "AudioDSP", dependencies: ["CRealtime", "CRubberBand", "CSpatialKernels", "CSpeexDSP"],
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]),
        // Graph model, compiler and render engine.
        .target(name: "AudioGraph", dependencies: ["AudioDSP", "CRealtime", "Locking"]),
        // HRTF datasets: SOFA files read with libmysofa, resampled to the engine rate with soxr (control side).
        .target(name: "SpatialAssets", dependencies: ["AudioDSP", "CMySofa", "CSoxr"]),
        // Decoding, encoding and sample-rate conversion.
        .target(name: "AudioFiles", dependencies: ["CSndFile", "CSoxr", "CFFmpeg", "Locking"]),
        // Patch files: YAML <-> located document model.
        .target(name: "Patches", dependencies: [.product(name: "Yams", package: "Yams")]),
        // Glue: applies patches to an engine, loads files into buffers and HRTF sets, offline rendering.
        .target(
            name: "SoundstageKit", dependencies: ["AudioGraph", "AudioFiles", "Patches", "SpatialAssets", "Locking"]),
        // JACK host adapter.
        .target(name: "JackHost", dependencies: ["AudioGraph", "CJack", "CRealtime", "Locking"]),
        // OSC control: liblo servers, address space, subscriptions, timetag scheduling; the OSCQuery
        // server and the web view (HTTP and WebSocket through FlyingFox; the page's files are resources).
        .target(
            name: "OSCControl",
            dependencies: [
                "AudioGraph", "AudioDSP", "SoundstageKit", "AudioFiles", "CLibLo", "COSCSocket", "CProcessMemory",
                "Locking",
                .product(name: "FlyingFox", package: "FlyingFox"),
                .product(name: "FlyingSocks", package: "FlyingFox")
            ],
            resources: [
                .embedInCode("Resources/view/index.html"), .embedInCode("Resources/view/osc.js"),
                .embedInCode("Resources/view/view.css"), .embedInCode("Resources/view/view.js")
            ]),
        .executableTarget(
            name: "soundstage",
            dependencies: [
                "SoundstageKit", "JackHost", "AudioGraph", "AudioFiles", "Patches", "OSCControl", "Locking",
                "CProcessMemory",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]
        ),
        // Test helpers: Goertzel probe, click detector, seeded noise, JACK server fixture.
        .target(name: "DSPTestSupport", dependencies: ["AudioDSP", "CAllocationCounter"]),
        .testTarget(name: "AudioDSPTests", dependencies: ["AudioDSP", "DSPTestSupport"]),
        .testTarget(
            name: "SpatialAssetsTests", dependencies: ["SpatialAssets", "AudioDSP", "CMySofa", "DSPTestSupport"]),
        .testTarget(
            name: "AudioGraphTests",
            dependencies: ["AudioGraph", "SpatialAssets", "SoundstageKit", "DSPTestSupport", "CAllocationCounter"]),
        .testTarget(name: "AudioFilesTests", dependencies: ["AudioFiles", "DSPTestSupport"], exclude: ["Corpus"]),
        .testTarget(name: "PatchesTests", dependencies: ["Patches"]),
        .testTarget(
            name: "SoundstageKitTests",
            dependencies: [
                "SoundstageKit", "AudioGraph", "AudioDSP", "AudioFiles", "Patches", "DSPTestSupport",
                "CAllocationCounter"
            ],
            exclude: ["Baseline"]
        ),
        .testTarget(
            name: "OSCControlTests",
            dependencies: [
                "OSCControl", "AudioGraph", "AudioFiles", "SoundstageKit", "Patches", "CLibLo", "DSPTestSupport",
                "CAllocationCounter"
            ],
            exclude: ["Python"]
        ),
        .testTarget(
            name: "JackHostTests",
            dependencies: [
                "JackHost", "AudioGraph", "CJack", "DSPTestSupport", "SoundstageKit", "AudioFiles", "CAllocationCounter"
            ]
        )
    ]
)
