//! Specialising containers as they are consumed: a dict with an `action` key becomes a row of the
//! trace columns, a `{filename, line, name}` dict an interned frame. Also the value conversions the
//! schema check uses.

use super::{Machine, Value};
use crate::model::{Action, Frame, FxFields, Interner, StackId, StrId, TraceEntry};

/// Well-known keys, interned up front so matching a key is one integer compare.
pub(super) struct Keys {
    action: StrId,
    addr: StrId,
    size: StrId,
    stream: StrId,
    time_us: StrId,
    frames: StrId,
    compile_context: StrId,
    user_metadata: StrId,
    device_free: StrId,
    filename: StrId,
    line: StrId,
    name: StrId,
    fx_node_op: StrId,
    fx_node_name: StrId,
    fx_node_target: StrId,
    fx_original_trace: StrId,
    /// The known action names, so an entry's action is found by id, with no string work per entry.
    actions: Vec<(StrId, Action)>,
}

impl Keys {
    pub(super) fn new(i: &mut Interner) -> Keys {
        Keys {
            action: i.intern_str("action"),
            addr: i.intern_str("addr"),
            size: i.intern_str("size"),
            stream: i.intern_str("stream"),
            time_us: i.intern_str("time_us"),
            frames: i.intern_str("frames"),
            compile_context: i.intern_str("compile_context"),
            user_metadata: i.intern_str("user_metadata"),
            device_free: i.intern_str("device_free"),
            filename: i.intern_str("filename"),
            line: i.intern_str("line"),
            name: i.intern_str("name"),
            fx_node_op: i.intern_str("fx_node_op"),
            fx_node_name: i.intern_str("fx_node_name"),
            fx_node_target: i.intern_str("fx_node_target"),
            fx_original_trace: i.intern_str("fx_original_trace"),
            actions: Action::known()
                .map(|(a, name)| (i.intern_str(name), a))
                .collect(),
        }
    }
}

impl Machine {
    pub(super) fn specialise_dict(&mut self, pairs: &[[Value; 2]]) -> Option<Value> {
        let k = &self.keys;
        let mut has_action = false;
        let mut has_filename = false;
        let mut has_name = false;
        for [key, _] in pairs {
            match key {
                Value::Str(s) if *s == k.action => has_action = true,
                Value::Str(s) if *s == k.filename => has_filename = true,
                Value::Str(s) if *s == k.name => has_name = true,
                _ => {}
            }
        }
        if has_action {
            self.entry_of(pairs)
        } else if has_filename && has_name {
            self.frame_of(pairs)
        } else {
            None
        }
    }

    /// A trace entry dict becomes a row of `self.entries`; a dict whose fields have the wrong types stays
    /// generic (and the schema check reports it).
    pub(super) fn entry_of(&mut self, pairs: &[[Value; 2]]) -> Option<Value> {
        let k = &self.keys;
        let mut e = TraceEntry {
            action: Action::Snapshot,
            addr: 0,
            size: 0,
            stream: 0,
            time_us: None,
            stack: StackId::EMPTY,
            compile_context: None,
            user_metadata: None,
            device_free: None,
        };
        let mut action = None;
        let mut invalid = None;
        // A size past the bound waits for the action: an `oom` entry's size is what the program asked
        // for, which may be any amount (a wrong shape asks for petabytes); it occupies no address space.
        let mut size_error = None;
        for &[key, value] in pairs {
            let Value::Str(key) = key else { continue };
            if key == k.action {
                action = Some(as_str(value)?);
            } else if key == k.addr {
                e.addr = as_u64(value)?;
                if matches!(value, Value::Int(i) if i < 0) {
                    invalid.get_or_insert_with(|| format!("address {} (negative)", e.addr as i64));
                }
            } else if key == k.size {
                e.size = as_u64(value)?;
                if let Err(why) = check_bytes(value) {
                    size_error = Some((value, why));
                }
            } else if key == k.stream {
                e.stream = as_u64(value)?;
            } else if key == k.time_us {
                e.time_us = match value {
                    Value::None => None,
                    v => Some(as_u64(v)? as i64),
                };
            } else if key == k.frames {
                e.stack = as_stack(value)?;
            } else if key == k.compile_context {
                e.compile_context = as_str(value);
            } else if key == k.user_metadata {
                e.user_metadata = as_str(value);
            } else if key == k.device_free {
                e.device_free = as_u64(value);
            }
        }
        let action = action?;
        e.action = self
            .keys
            .actions
            .iter()
            .find(|(id, _)| *id == action)
            .map_or(Action::Other(action), |&(_, a)| a);
        let request = e.action == Action::Oom;
        if let Some((value, why)) = size_error {
            if !(request && check_count(value).is_ok()) {
                invalid.get_or_insert_with(|| format!("size {why}"));
            }
        }
        if invalid.is_none() && !request && e.addr.checked_add(e.size).is_none() {
            invalid = Some(format!(
                "address 0x{:x} and size {}, which run past the end of the 64-bit address space",
                e.addr, e.size
            ));
        }
        if let Some(why) = invalid {
            if self.invalid_entry.is_none() {
                self.invalid_entry = Some((self.entries.len() as u32, why));
            }
            (e.addr, e.size) = (0, 0);
        }
        self.entries.push(&e);
        Some(Value::Entry(self.entries.len() as u32 - 1))
    }

    pub(super) fn frame_of(&mut self, pairs: &[[Value; 2]]) -> Option<Value> {
        let k = &self.keys;
        let (mut filename, mut name, mut line) = (None, None, 0u64);
        let mut fx = FxFields::default();
        let mut has_fx = false;
        for &[key, value] in pairs {
            let Value::Str(key) = key else { return None };
            if key == k.filename {
                filename = Some(as_str(value)?);
            } else if key == k.name {
                name = Some(as_str(value)?);
            } else if key == k.line {
                line = as_u64(value)?;
            } else if key == k.fx_node_op {
                (fx.node_op, has_fx) = (as_str(value), true);
            } else if key == k.fx_node_name {
                (fx.node_name, has_fx) = (as_str(value), true);
            } else if key == k.fx_node_target {
                (fx.node_target, has_fx) = (as_str(value), true);
            } else if key == k.fx_original_trace {
                (fx.original_trace, has_fx) = (as_str(value), true);
            }
        }
        let frame = Frame {
            filename: filename?,
            line,
            name: name?,
            fx: has_fx.then_some(fx),
        };
        Some(Value::Frame(self.interner.intern_frame(frame)))
    }
}

/// An integer as PyTorch means it: exact for every 64-bit value (negative values keep their bits).
pub(crate) fn as_u64(v: Value) -> Option<u64> {
    match v {
        Value::Int(i) => Some(i as u64),
        Value::U64(u) => Some(u),
        Value::Bool(b) => Some(b as u64),
        _ => None,
    }
}

/// A byte count as an allocator writes it: never negative, never beyond [`MAX_BYTES`]; the error says
/// what the value is.
pub(crate) fn check_bytes(v: Value) -> Result<u64, String> {
    match check_count(v)? {
        b if b <= MAX_BYTES => Ok(b),
        b => Err(format!("{b} (over 1 PiB)")),
    }
}

/// A count of bytes with no bound but 64 bits (an `oom` entry's request): never negative.
fn check_count(v: Value) -> Result<u64, String> {
    match v {
        Value::Int(i) if i < 0 => Err(format!("{i} (negative)")),
        Value::Wide(_) | Value::Big(_) => Err("beyond 64 bits".to_string()),
        v => as_u64(v).ok_or_else(|| "not an int".to_string()),
    }
}

pub(crate) fn as_str(v: Value) -> Option<StrId> {
    match v {
        Value::Str(s) => Some(s),
        _ => None,
    }
}

/// A `frames` value: an interned stack, or the empty list.
pub(crate) fn as_stack(v: Value) -> Option<StackId> {
    match v {
        Value::Stack(s) => Some(s),
        Value::List(_) | Value::Tuple(_) => Some(StackId::EMPTY),
        _ => None,
    }
}

/// The most bytes one allocation, block or segment can hold: far beyond any device (1 PiB), far below
/// what sums of many could overflow.
pub(crate) const MAX_BYTES: u64 = 1 << 50;
