//! A real HTTP server on 127.0.0.1, on a thread of its own with its own tokio runtime,
//! for the test servers (the reference provider, the request recorder). Takes an axum
//! router and a port (0: any free one); returns a handle with the address. Never binds
//! anything but 127.0.0.1, and never outlives its handle: dropping it stops the runtime,
//! which cancels every connection still open (a request held at a gate included).
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener};
use std::thread::JoinHandle;

use tokio::sync::oneshot;

pub(crate) struct Loopback {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Loopback {
    /// Binds 127.0.0.1:`port` before returning, so a client may connect at once.
    pub(crate) fn start(port: u16, app: axum::Router) -> std::io::Result<Loopback> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel::<()>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let thread = std::thread::Builder::new()
            .name(format!("loopback-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let listener = match tokio::net::TcpListener::from_std(listener) {
                        Ok(listener) => listener,
                        Err(e) => panic!("loopback listener: {e}"),
                    };
                    tokio::select! {
                        served = axum::serve(listener, app) => {
                            if let Err(e) = served {
                                panic!("loopback server: {e}");
                            }
                        }
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime here cancels the connection tasks still running.
            })?;
        Ok(Loopback {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Loopback {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been printed; do not panic again
            // while a failing test unwinds.
            let _ = thread.join();
        }
    }
}
