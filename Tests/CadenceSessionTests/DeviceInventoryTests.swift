import CadenceSession
import DRM
import Testing

/// ``DeviceInventory``: what a card says about itself.
@Suite struct DeviceInventoryTests {
    @Test func aConnectorIsDrivenAtItsCRTCsModeOrAtNothing() throws {
        let idle = FakeDRMDevice()
        let i = try DeviceInventory(try DRMDevice.open(fake: idle))
        let connector = try #require(i.connectors.first?.0)
        #expect(i.drivenMode(of: connector) == nil)
        // Lit (by fbcon, say) at its second mode: that is the mode it is driven at.
        let lit = FakeDRMDevice()
        let mode = lit.connectors[0].modes[1]
        lit.preset(mode: mode)
        let l = try DeviceInventory(try DRMDevice.open(fake: lit))
        #expect(l.drivenMode(of: try #require(l.connectors.first?.0)) == mode)
    }
}
