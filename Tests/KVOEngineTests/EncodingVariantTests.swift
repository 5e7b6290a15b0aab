@testable import KVOEngine
import KVOValues
import Testing

/// The encoding variants' constants and set agree with the rule an
/// observation's variant is made by.
@Suite struct EncodingVariantTests {
    @Test func theUsualVariantsAreThoseOfNewOnlyFullAndCompact() {
        #expect(EncodingVariant.newFull == EncodingVariant.of(options: .new, compact: false))
        #expect(EncodingVariant.newCompact == EncodingVariant.of(options: .new, compact: true))
        var usual = EncodingVariants.none
        usual.insert(EncodingVariant.newFull)
        usual.insert(EncodingVariant.newCompact)
        #expect(usual == .newOnly)
    }

    @Test func everyVariantTellsItsOptionsAndFormBack() {
        let optionSets: [ObservationOptions] = [[], .new, .old, [.new, .old]]
        var seen = EncodingVariants.none
        for options in optionSets {
            for compact in [false, true] {
                let variant = EncodingVariant.of(options: options, compact: compact)
                #expect((0..<8).contains(variant))
                #expect(!seen.contains(variant), "two option sets share variant \(variant)")
                seen.insert(variant)
                #expect(EncodingVariant.options(of: variant) == options)
                #expect(EncodingVariant.isCompact(variant) == compact)
                #expect(EncodingVariants(variant).isSingle && EncodingVariants(variant).first == variant)
                #expect(EncodingVariants(variant).containsCompact == compact)
            }
        }
        #expect(seen.rawValue == 0xFF)
        #expect(!seen.isSingle)
    }
}
