//! Link options of an experiment as written (`[TARGET=]VALUE` texts with their spans), merged
//! base-then-variant and parsed into [`LinkOptions`] with errors pointing at the text.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use linerate_units::{BitRate, Duration, Percent};
use toml::Spanned;

use super::raw::{OneOrMany, RawLink};
use super::{Ctx, ExperimentError};
use crate::impair::RateLayer;
use crate::spec::{LinkOptions, OnOff, Targeted};

/// One `[TARGET=]VALUE` entry with where it came from.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) text: String,
    pub(super) span: Range<usize>,
    pub(super) field: String,
}

#[derive(Debug, Clone, Default)]
pub(super) struct LinkTexts {
    rate: Vec<Entry>,
    delay: Vec<Entry>,
    jitter: Vec<Entry>,
    loss: Vec<Entry>,
    limit: Vec<Entry>,
    mtu: Vec<Entry>,
    offloads: Vec<Entry>,
    reorder: Option<bool>,
    rate_layer: Option<Entry>,
}

fn entries(v: &Option<Spanned<OneOrMany>>, field: String) -> Vec<Entry> {
    v.as_ref()
        .map(|s| {
            s.get_ref()
                .texts()
                .into_iter()
                .map(|text| Entry {
                    text,
                    span: s.span(),
                    field: field.clone(),
                })
                .collect()
        })
        .unwrap_or_default()
}

impl LinkTexts {
    /// The first entry set, if any (an experiment on real hosts has no emulated links).
    pub(super) fn first(&self) -> Option<&Entry> {
        [
            &self.rate,
            &self.delay,
            &self.jitter,
            &self.loss,
            &self.limit,
            &self.mtu,
            &self.offloads,
        ]
        .into_iter()
        .find_map(|v| v.first())
        .or(self.rate_layer.as_ref())
    }

    pub(super) fn from_raw(raw: &RawLink, prefix: &str) -> LinkTexts {
        LinkTexts {
            rate: entries(&raw.rate, format!("{prefix}rate")),
            delay: entries(&raw.delay, format!("{prefix}delay")),
            jitter: entries(&raw.jitter, format!("{prefix}jitter")),
            loss: entries(&raw.loss, format!("{prefix}loss")),
            limit: entries(&raw.limit, format!("{prefix}limit")),
            mtu: entries(&raw.mtu, format!("{prefix}mtu")),
            offloads: entries(&raw.offloads, format!("{prefix}offloads")),
            reorder: raw.reorder.as_ref().map(|r| *r.get_ref()),
            rate_layer: raw.rate_layer.as_ref().map(|r| Entry {
                text: r.get_ref().clone(),
                span: r.span(),
                field: format!("{prefix}rate_layer"),
            }),
        }
    }

    /// `self` with `over` applied on top (later values win).
    pub(super) fn with(&self, over: &LinkTexts) -> LinkTexts {
        let cat = |a: &Vec<Entry>, b: &Vec<Entry>| a.iter().chain(b).cloned().collect();
        LinkTexts {
            rate: cat(&self.rate, &over.rate),
            delay: cat(&self.delay, &over.delay),
            jitter: cat(&self.jitter, &over.jitter),
            loss: cat(&self.loss, &over.loss),
            limit: cat(&self.limit, &over.limit),
            mtu: cat(&self.mtu, &over.mtu),
            offloads: cat(&self.offloads, &over.offloads),
            reorder: over.reorder.or(self.reorder),
            rate_layer: over.rate_layer.clone().or_else(|| self.rate_layer.clone()),
        }
    }

    pub(super) fn list(&mut self, field: &str) -> Option<&mut Vec<Entry>> {
        Some(match field {
            "rate" => &mut self.rate,
            "delay" => &mut self.delay,
            "jitter" => &mut self.jitter,
            "loss" => &mut self.loss,
            "limit" => &mut self.limit,
            "mtu" => &mut self.mtu,
            "offloads" => &mut self.offloads,
            _ => return None,
        })
    }

    pub(super) fn options(&self, ctx: &Ctx<'_>) -> Result<LinkOptions, ExperimentError> {
        fn parse<T: FromStr>(
            ctx: &Ctx<'_>,
            list: &[Entry],
        ) -> Result<Vec<Targeted<T>>, ExperimentError>
        where
            T::Err: fmt::Display,
        {
            list.iter()
                .map(|e| {
                    e.text.parse::<Targeted<T>>().map_err(|m| {
                        ctx.err(e.span.clone(), &e.field, format!("{:?}: {m}", e.text))
                    })
                })
                .collect()
        }
        Ok(LinkOptions {
            rate: parse::<BitRate>(ctx, &self.rate)?,
            delay: parse::<Duration>(ctx, &self.delay)?,
            jitter: parse::<Duration>(ctx, &self.jitter)?,
            loss: parse::<Percent>(ctx, &self.loss)?,
            limit: parse::<u32>(ctx, &self.limit)?,
            mtu: parse::<u32>(ctx, &self.mtu)?,
            offloads: parse::<OnOff>(ctx, &self.offloads)?,
            reorder: self.reorder.unwrap_or(false),
            rate_layer: match &self.rate_layer {
                None => RateLayer::default(),
                Some(e) => e
                    .text
                    .parse()
                    .map_err(|m| ctx.err(e.span.clone(), &e.field, m))?,
            },
        })
    }

    /// The entry a `--flag` error from [`LabSpec::new`] is about (the last one written).
    pub(super) fn blame(&self, flag: &str) -> Option<&Entry> {
        let list = match flag {
            "--rate" => &self.rate,
            "--delay" => &self.delay,
            "--jitter" => &self.jitter,
            "--loss" => &self.loss,
            "--limit" => &self.limit,
            "--mtu" => &self.mtu,
            "--offloads" => &self.offloads,
            _ => return None,
        };
        list.last()
    }
}
