//! The listener's stream of accepted connections, which no accept error ends.
//!
//! tonic's own accept loop stops for good on most accept errors (EMFILE and ENFILE among
//! them), leaving a process that lives on but serves nothing. [`Accepting`] logs such an error,
//! pauses (10 ms, doubling to a second while errors repeat) and accepts again, so a daemon
//! that ran out of file descriptors serves again as soon as connections close.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::time::Sleep;
use tokio_stream::Stream;

const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

/// A listener that accepts connections one at a time.
pub trait Accept: Unpin {
    /// An accepted connection.
    type Conn;
    /// Polls for the next connection.
    fn poll_accept_conn(&self, cx: &mut Context<'_>) -> Poll<io::Result<Self::Conn>>;
}

impl Accept for TcpListener {
    type Conn = TcpStream;
    fn poll_accept_conn(&self, cx: &mut Context<'_>) -> Poll<io::Result<TcpStream>> {
        self.poll_accept(cx).map_ok(|(s, _)| s)
    }
}

impl Accept for UnixListener {
    type Conn = UnixStream;
    fn poll_accept_conn(&self, cx: &mut Context<'_>) -> Poll<io::Result<UnixStream>> {
        self.poll_accept(cx).map_ok(|(s, _)| s)
    }
}

/// Accepted connections of `L`; never ends and never yields an error.
#[derive(Debug)]
pub struct Accepting<L> {
    listener: L,
    pause: Option<Pin<Box<Sleep>>>,
    next_pause: Duration,
    errors: u64,
}

impl<L: Accept> Accepting<L> {
    /// Accepts on `listener`.
    pub fn new(listener: L) -> Self {
        Accepting {
            listener,
            pause: None,
            next_pause: FIRST_PAUSE,
            errors: 0,
        }
    }

    /// Accept errors seen so far.
    pub fn errors(&self) -> u64 {
        self.errors
    }
}

impl<L: Accept> Stream for Accepting<L> {
    type Item = io::Result<L::Conn>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if let Some(p) = this.pause.as_mut() {
                if p.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.pause = None;
            }
            match this.listener.poll_accept_conn(cx) {
                Poll::Ready(Ok(c)) => {
                    this.next_pause = FIRST_PAUSE;
                    return Poll::Ready(Some(Ok(c)));
                }
                Poll::Ready(Err(e)) => {
                    this.errors += 1;
                    // One line per error burst's first error and then every 1000th: a full
                    // descriptor table fails every accept until connections close.
                    if this.next_pause == FIRST_PAUSE || this.errors % 1000 == 0 {
                        tracing::warn!(
                            error = %e,
                            errors = this.errors,
                            "accepting a connection failed; accepting again shortly"
                        );
                    }
                    this.pause = Some(Box::pin(tokio::time::sleep(this.next_pause)));
                    this.next_pause = (this.next_pause * 2).min(LONGEST_PAUSE);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}
