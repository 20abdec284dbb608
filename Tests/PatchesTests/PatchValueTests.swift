// Tests of PatchValue's lenient accessors and its YAML 1.1 boolean spellings.

import Patches
import Testing

@Suite struct PatchValueTests {
    @Test func asDoubleAcceptsIntegers() {
        #expect(PatchValue.int(3).asDouble == 3)
        #expect(PatchValue.double(0.5).asDouble == 0.5)
        #expect(PatchValue.string("3").asDouble == nil)
        #expect(PatchValue.bool(true).asDouble == nil)
    }

    @Test func asIntAcceptsOnlyIntegralDoubles() {
        #expect(PatchValue.int(-4).asInt == -4)
        #expect(PatchValue.double(48000).asInt == 48000)
        #expect(PatchValue.double(1.5).asInt == nil)
        #expect(PatchValue.double(.infinity).asInt == nil)
        #expect(PatchValue.double(1e300).asInt == nil)
        #expect(PatchValue.string("3").asInt == nil)
    }

    @Test(arguments: ["true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"])
    func asBoolReadsYAML11TrueSpellings(text: String) {
        #expect(PatchValue.string(text).asBool == true)
    }

    @Test(arguments: ["false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"])
    func asBoolReadsYAML11FalseSpellings(text: String) {
        #expect(PatchValue.string(text).asBool == false)
    }

    @Test func asBoolRejectsShortFormsAndNumbers() {
        for value: PatchValue in ["y", "n", "1", "0", "yEs", 1, 0, 1.0, []] {
            #expect(value.asBool == nil, "\(value)")
        }
        #expect(PatchValue.bool(false).asBool == false)
    }

    @Test func accessorsDoNotConvertAcrossKinds() {
        #expect(PatchValue.string("a").asString == "a")
        #expect(PatchValue.int(1).asString == nil)
        #expect(PatchValue.list([1]).asList == [1])
        #expect(PatchValue.int(1).asList == nil)
    }

    @Test func integerAndDoubleAreDistinctValues() {
        #expect(PatchValue.int(1) != PatchValue.double(1))
    }
}
