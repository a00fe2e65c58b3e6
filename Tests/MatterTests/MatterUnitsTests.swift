import Testing
@testable import MatterDriver

@Suite struct MatterUnitsTests {
    @Test("brightness and saturation: every HomeKit percent written and read back is the same percent")
    func percentsAreReversible() {
        for percent in 0...100 {
            #expect(MatterUnits.percent(level: Double(MatterUnits.level(percent: Double(percent), minimum: 0))) == percent)
            #expect(MatterUnits.percent(saturation: Double(MatterUnits.saturation(percent: Double(percent)))) == percent)
        }
        #expect(MatterUnits.level(percent: 0) == 1) // MinLevel: MoveToLevelWithOnOff turns the light off there
        #expect(MatterUnits.level(percent: 100) == 254)
        #expect(MatterUnits.percent(level: 254) == 100 && MatterUnits.percent(level: 127) == 50)
    }

    @Test("hue: 254 steps for 360 degrees, so a degree comes back within one step (1.42°); the ends are exact")
    func hueWithinOneStep() {
        for degrees in 0...360 {
            let back = MatterUnits.degrees(hue: Double(MatterUnits.hue(degrees: Double(degrees))))
            #expect(abs(back - degrees) <= 1, "\(degrees) -> \(back)")
        }
        #expect(MatterUnits.hue(degrees: 360) == 254 && MatterUnits.degrees(hue: 254) == 360)
        for hue in 0...254 { #expect(MatterUnits.hue(degrees: Double(MatterUnits.degrees(hue: Double(hue)))) == hue) }
    }

    @Test("temperatures in 0.01 °C, window positions in 0.01 % closed, batteries in half percents")
    func otherUnits() {
        for centi in stride(from: -4000, through: 6000, by: 7) {
            #expect(MatterUnits.centi(celsius: MatterUnits.celsius(centi: Double(centi))) == centi)
        }
        #expect(MatterUnits.celsius(centi: 2153) == 21.53)
        for position in 0...100 {
            #expect(MatterUnits.position(percent100thsClosed: Double(MatterUnits.percent100thsClosed(position: Double(position)))) == position)
        }
        #expect(MatterUnits.position(percent100thsClosed: 0) == 100) // Matter 0 = open; HomeKit 100 = open
        #expect(MatterUnits.percent(halfPercents: 200) == 100 && MatterUnits.percent(halfPercents: 187) == 94)
    }

    @Test("a float32 reading is published as the decimal it stands for; a float64 one as it is")
    func singles() {
        #expect(MatterUnits.single(238.8000030517578) == 238.8)
        #expect(MatterUnits.single(0.2200000286102295) == 0.22000003) // the device's float32 (0.22 would be 0.21999999)
        #expect(MatterUnits.single(1234567.891) == 1234567.891)
        #expect(MatterUnits.single(21.5) == 21.5)
    }

    @Test("illuminance: MeasuredValue is 10,000 × log10(lux) + 1; 0 is too dark to measure")
    func illuminance() {
        #expect(MatterUnits.lux(measured: 1) == 1)
        #expect(MatterUnits.lux(measured: 20_001) == 100)
        #expect(MatterUnits.lux(measured: 40_001) == 10_000)
        #expect(MatterUnits.lux(measured: 0) == 0.0001)
        #expect(MatterUnits.lux(measured: 23_011) == 200) // 10^2.301 = 199.99, to 4 digits
    }
}
