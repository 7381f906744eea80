//! A TCP proxy on 127.0.0.1 that delays every chunk it forwards by a fixed time, in each
//! direction: the "database behind a slow network" of issue 44's serve benchmark
//! (scripts/bench-serve.sh puts it in front of PostgreSQL).
//!
//! ```text
//! cargo run --release --example delay_proxy -- --to 127.0.0.1:5432 --each-way-ms 10
//! ```
//!
//! Takes the address to forward to (a loopback one) and the delay; prints one line,
//! `listening 127.0.0.1:PORT`, and forwards every connection until stopped. A chunk read
//! at time t on one side is written to the other at t + delay, in order, without waiting
//! for the chunks before it to be written first: the delay is a latency, not a
//! bandwidth cap, so a request and its answer (one round trip) cost 2 × delay more than
//! without the proxy — `--each-way-ms 10` is "+20 ms per round trip". Never binds or
//! connects to anything but 127.0.0.1.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration;

use clap::Parser;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

#[derive(Parser)]
struct Args {
    /// Where to forward: an address on 127.0.0.1.
    #[arg(long)]
    to: SocketAddr,
    /// The delay added to every chunk, in each direction, in milliseconds.
    #[arg(long, default_value_t = 10)]
    each_way_ms: u64,
    /// Port to listen on, on 127.0.0.1 (0: any free one, printed at start).
    #[arg(long, default_value_t = 0)]
    port: u16,
}

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if !args.to.ip().is_loopback() {
        eprintln!("error: --to must be a loopback address, not {}", args.to);
        return std::process::ExitCode::from(2);
    }
    // One thread: the proxy only moves bytes and waits on timers, and the benchmark's
    // two cores belong to the server and its load.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: no tokio runtime: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match runtime.block_on(serve(args)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

async fn serve(args: Args) -> std::io::Result<()> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, args.port)).await?;
    println!("listening {}", listener.local_addr()?);
    let delay = Duration::from_millis(args.each_way_ms);
    loop {
        let (inbound, _) = listener.accept().await?;
        let to = args.to;
        tokio::spawn(async move {
            if let Err(e) = forward(inbound, to, delay).await {
                eprintln!("connection to {to}: {e}");
            }
        });
    }
}

/// Both directions of one connection, each delayed by `delay`.
async fn forward(inbound: TcpStream, to: SocketAddr, delay: Duration) -> std::io::Result<()> {
    let outbound = TcpStream::connect(to).await?;
    // Small writes (a database's messages) go out when the delay says, not when Nagle's
    // algorithm would let them: the added latency is the delay alone.
    inbound.set_nodelay(true)?;
    outbound.set_nodelay(true)?;
    let (in_read, in_write) = inbound.into_split();
    let (out_read, out_write) = outbound.into_split();
    let up = tokio::spawn(one_way(in_read, out_write, delay));
    let down = tokio::spawn(one_way(out_read, in_write, delay));
    let (up, down) = tokio::join!(up, down);
    up.map_err(std::io::Error::other)??;
    down.map_err(std::io::Error::other)??;
    Ok(())
}

/// Reads chunks from `from` and writes each to `to` once `delay` has passed since it was
/// read. A reader and a writer joined by a channel: the reader stamps each chunk as it
/// arrives and never waits on the writer, so chunks in flight overlap their delays.
async fn one_way(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    delay: Duration,
) -> std::io::Result<()> {
    let (chunks, mut pending) = tokio::sync::mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let writer = tokio::spawn(async move {
        while let Some((due, chunk)) = pending.recv().await {
            tokio::time::sleep_until(due).await;
            to.write_all(&chunk).await?;
        }
        // The reading side closed: pass the end on once the last chunk is out.
        to.shutdown().await
    });
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        if chunks
            .send((Instant::now() + delay, buf[..n].to_vec()))
            .is_err()
        {
            break;
        }
    }
    drop(chunks);
    writer.await.map_err(std::io::Error::other)?
}
