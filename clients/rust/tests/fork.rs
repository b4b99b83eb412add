//! A child made by fork() does not repeat its parent's ids: its first id carries its own pid.
//! (Alone in this file: the test process must have no other test thread when it forks.)

use pg_idgen_client::Xid;

#[test]
fn forked_child_takes_its_own_pid() {
    let before = Xid::new();
    assert_eq!(before.pid(), std::process::id() as u16);
    let mut fds = [0; 2];
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    let child = unsafe { libc::fork() };
    assert!(child >= 0, "fork failed");
    if child == 0 {
        // The child: send its next id and its pid, then leave without running anything else.
        let id = Xid::new();
        let mut message = [0u8; 16];
        message[..12].copy_from_slice(id.as_bytes());
        message[12..].copy_from_slice(&std::process::id().to_be_bytes());
        unsafe {
            libc::write(fds[1], message.as_ptr().cast(), message.len());
            libc::_exit(0);
        }
    }
    let mut message = [0u8; 16];
    let read = unsafe { libc::read(fds[0], message.as_mut_ptr().cast(), message.len()) };
    let mut status = 0;
    unsafe { libc::waitpid(child, &mut status, 0) };
    assert_eq!(read, 16);
    let child_id = Xid::try_from(&message[..12]).unwrap();
    let child_pid = u32::from_be_bytes([message[12], message[13], message[14], message[15]]);
    assert_eq!(child_pid, child as u32);
    assert_eq!(child_id.pid(), child_pid as u16);
    let after = Xid::new();
    assert_eq!(after.pid(), std::process::id() as u16);
    assert!(after > before);
    assert_ne!(child_id, after);
}
