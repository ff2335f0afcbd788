#include <core.p4>
#include <tna.p4>
header eth_h { bit<48> dst; bit<48> src; bit<16> type; }
struct headers_t { eth_h eth; }
struct meta_t { }
parser IgP(packet_in pkt, out headers_t hdr, out meta_t meta,
           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition accept;
    }
}
control SwitchVMIngress(inout headers_t hdr, inout meta_t meta,
                        in ingress_intrinsic_metadata_t ig_intr_md,
                        in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                        inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                        inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<16>>(1024) counts;
    RegisterAction<bit<32>, bit<16>, bit<32>>(counts) bump = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; v = v + 1; }
    };
    action set_port(PortId_t port_out) { ig_tm_md.ucast_egress_port = port_out; }
    action count(bit<16> slot) { hdr.eth.type = (bit<16>) bump.execute(slot); }
    table forward {
        key = {
            ig_intr_md.ingress_port: exact @name("port");
            hdr.eth.dst: ternary @name("dst");
        }
        actions = { set_port; count; NoAction; }
        default_action = NoAction();
        size = 512;
    }
    apply { forward.apply(); }
}
control IgD(packet_out pkt, inout headers_t hdr, in meta_t meta,
            in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgP(packet_in pkt, out headers_t hdr, out meta_t meta,
           out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Eg(inout headers_t hdr, inout meta_t meta, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}
control EgD(packet_out pkt, inout headers_t hdr, in meta_t meta,
            in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { }
}
Pipeline(IgP(), SwitchVMIngress(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
