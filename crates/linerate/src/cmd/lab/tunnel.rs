//! The tunnel layer in `lab show`, `lab up` and `lab run`: interfaces, daemons, and
//! `calc tunnel`'s prediction beside what the tunnel showed.

/// The tunnel layer of `lab show`: interfaces and addresses over the links, the daemons, and
/// `calc tunnel`'s prediction beside the interface MTU read back.
pub fn show_text(t: &linerate_lab::tunnel::TunnelState) -> String {
    let mut out = format!(
        "  tunnel {} ({}) over the links to {}\n",
        t.spec,
        if t.implementation.is_empty() {
            "starting"
        } else {
            &t.implementation
        },
        t.underlay
    );
    out.push_str(&format!(
        "    gen   {:<13} {}\n    recv  {:<13} {}\n",
        t.gen_interface, t.gen_address, t.recv_interface, t.recv_address
    ));
    for p in &t.processes {
        out.push_str(&format!(
            "    {} in {}: pid {}, log {}\n",
            p.program,
            p.node,
            p.pid,
            p.log.display()
        ));
    }
    out.push_str(&format!("    {}\n", prediction(t)));
    out
}

/// `calc tunnel`'s inner MTU, MSS and goodput share beside the interface's MTU.
pub fn prediction(t: &linerate_lab::tunnel::TunnelState) -> String {
    let measured = t.mtu.map_or("-".to_owned(), |m| m.to_string());
    match linerate_lab::tunnel::predict(&t.spec, t.link_mtu) {
        Some(r) => {
            let explicit = t
                .spec
                .explicit_mtu()
                .map_or(String::new(), |m| format!("; MTU set to {m} explicitly"));
            format!(
                "calc tunnel {} on link MTU {}: inner MTU {}, TCP MSS {}, goodput {:.1}% of line \
                 rate{explicit}; measured: interface MTU {measured}",
                r.layers
                    .first()
                    .map_or_else(String::new, |l| l.encap.to_string()),
                t.link_mtu,
                r.inner_mtu.bytes(),
                r.tcp_mss.bytes(),
                r.goodput_efficiency.percent()
            )
        }
        None => format!("measured: interface MTU {measured}"),
    }
}

/// Per tunnelled variant: the implementation that ran, `calc tunnel`'s prediction and what the
/// path showed (interface MTU, TCP_MAXSEG of the load's connection).
pub fn run_lines(
    e: &linerate_lab::experiment::Experiment,
    r: &linerate_lab::runner::ExperimentResult,
) -> String {
    let mut out = String::new();
    for v in &e.variants {
        let Some(spec) = &v.spec.tunnel else {
            continue;
        };
        let runs: Vec<_> = r
            .runs
            .iter()
            .filter(|x| x.variant == v.name)
            .filter_map(|x| x.tunnel.as_ref())
            .collect();
        let Some(first) = runs.first() else {
            continue;
        };
        if out.is_empty() {
            out.push_str("\ntunnels (calc tunnel's prediction, then what was measured):\n");
        }
        let want_mtu = linerate_lab::tunnel::interface_mtu(spec, first.link_mtu);
        let maxseg: Vec<String> = {
            let mut m: Vec<u64> = runs.iter().filter_map(|t| t.tcp_maxseg).collect();
            m.sort_unstable();
            m.dedup();
            m.iter().map(u64::to_string).collect()
        };
        let explicit = spec.explicit_mtu().is_some();
        let predicted = linerate_lab::tunnel::predict(spec, first.link_mtu).map_or_else(
            String::new,
            |p| {
                format!(
                    "calc tunnel on link MTU {}: inner MTU {} (MSS {}, {} with timestamps), goodput \
                     {:.1}% of line rate{}",
                    first.link_mtu,
                    p.inner_mtu.bytes(),
                    p.tcp_mss.bytes(),
                    p.tcp_payload.bytes(),
                    p.goodput_efficiency.percent(),
                    if explicit {
                        "; the MTU set here is larger or smaller on purpose (larger: the link \
                         fragments the encrypted packets)"
                    } else {
                        ""
                    }
                )
            },
        );
        out.push_str(&format!(
            "  {}: {} via {}\n    {predicted}\n    measured: interface MTU {} (set {want_mtu}), \
             TCP_MAXSEG {} (expected MTU − 52 = {}{})\n",
            v.name,
            spec,
            first.implementation,
            first
                .interface_mtu
                .map_or("-".to_owned(), |m| m.to_string()),
            if maxseg.is_empty() {
                "- (the load did not report it)".to_owned()
            } else {
                maxseg.join("/")
            },
            want_mtu.saturating_sub(52),
            if runs
                .iter()
                .filter_map(|t| t.tcp_maxseg)
                .any(|m| m < u64::from(want_mtu.saturating_sub(52)))
            {
                "; Linux holds a young connection's segments to half the largest window it has \
                 seen, which shows at large MTUs"
            } else {
                ""
            }
        ));
    }
    out
}
