//! Library-level benchmarks (criterion): the gate on the canonical handoff and on 200 / 1,000
//! line citations, the credential scan on the 1,000-citation handoff, the one-pass symbol scan,
//! listing a 10,000-handoff store and picking the
//! exact slot in it. Whole-process numbers (what a hook costs) are in `benches/process.rs`.

mod fixtures;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use handoff_store::report::run_gate::gate_file;
use handoff_store::store::Store;

fn benches(c: &mut Criterion) {
    let f = fixtures::ensure();
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let mut group = c.benchmark_group("gate");
    group.sample_size(20);
    let small = path(&f.small_handoff);
    group.bench_function("canonical 2 citations", |b| {
        b.iter(|| black_box(gate_file(&small, None).exit_code))
    });
    let l200 = path(&f.lines_200);
    group.bench_function("200 line citations", |b| {
        b.iter(|| black_box(gate_file(&l200, None).exit_code))
    });
    let l1000 = path(&f.lines_1000);
    group.bench_function("1000 line citations", |b| {
        b.iter(|| black_box(gate_file(&l1000, None).exit_code))
    });
    let s50 = path(&f.symbols_50);
    group.bench_function("50 symbol citations", |b| {
        b.iter(|| black_box(gate_file(&s50, None).exit_code))
    });
    group.finish();

    // The credential scan alone, over every line of the 1,000-citation handoff (what each gate,
    // write, record and import runs).
    let mut group = c.benchmark_group("secrets");
    group.sample_size(50);
    let text = std::fs::read_to_string(&f.lines_1000).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    group.bench_function("scan 1000-citation handoff", |b| {
        b.iter(|| black_box(handoff_store::secrets::scan(&lines).hits.len()))
    });
    group.finish();

    let store = Store {
        dir: f.store.clone(),
    };
    let mut group = c.benchmark_group("store");
    group.sample_size(20);
    group.bench_function("list 10000", |b| b.iter(|| black_box(store.listed())));
    group.bench_function("exact pick in 10000", |b| {
        b.iter(|| black_box(store.finds(&f.small_slot)))
    });
    group.finish();
}

criterion_group!(library, benches);
criterion_main!(library);
