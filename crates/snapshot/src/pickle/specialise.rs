//! Specialising containers as they are consumed: a dict with an `action` key becomes a row of the
//! trace columns, a `{filename, line, name}` dict an interned frame. Also the value conversions the
//! schema check uses.

use super::{Machine, Value};
use crate::model::{Action, Frame, FxFields, Interner, StackId, StrId, TraceEntry};

/// What a well-known key names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    /// Any other string.
    Other,
    Action,
    Addr,
    Size,
    Stream,
    TimeUs,
    Frames,
    CompileContext,
    UserMetadata,
    DeviceFree,
    Filename,
    Line,
    Name,
    FxNodeOp,
    FxNodeName,
    FxNodeTarget,
    FxOriginalTrace,
}

/// Well-known keys and action names, interned up front (the machine's first strings, so their ids are
/// small): what a key names, or which action an entry's is, is one lookup by its id, with no string
/// work and no chain of comparisons per entry.
pub(super) struct Keys {
    /// By string id: what the key names (`Field::Other` past the end).
    fields: Vec<Field>,
    /// By string id: the action it names, if it is a known one.
    actions: Vec<Option<Action>>,
}

impl Keys {
    pub(super) fn new(i: &mut Interner) -> Keys {
        let mut fields = Vec::new();
        for (name, field) in [
            ("action", Field::Action),
            ("addr", Field::Addr),
            ("size", Field::Size),
            ("stream", Field::Stream),
            ("time_us", Field::TimeUs),
            ("frames", Field::Frames),
            ("compile_context", Field::CompileContext),
            ("user_metadata", Field::UserMetadata),
            ("device_free", Field::DeviceFree),
            ("filename", Field::Filename),
            ("line", Field::Line),
            ("name", Field::Name),
            ("fx_node_op", Field::FxNodeOp),
            ("fx_node_name", Field::FxNodeName),
            ("fx_node_target", Field::FxNodeTarget),
            ("fx_original_trace", Field::FxOriginalTrace),
        ] {
            let id = i.intern_str(name).0 as usize;
            if fields.len() <= id {
                fields.resize(id + 1, Field::Other);
            }
            fields[id] = field;
        }
        let mut actions = Vec::new();
        for (action, name) in Action::known() {
            let id = i.intern_str(name).0 as usize;
            if actions.len() <= id {
                actions.resize(id + 1, None);
            }
            actions[id] = Some(action);
        }
        Keys { fields, actions }
    }

    /// What `key` names; `None` when it is no string.
    fn field(&self, key: Value) -> Option<Field> {
        match key {
            Value::Str(s) => Some(
                self.fields
                    .get(s.0 as usize)
                    .copied()
                    .unwrap_or(Field::Other),
            ),
            _ => None,
        }
    }

    /// The action the string `name` names.
    fn action(&self, name: StrId) -> Action {
        self.actions
            .get(name.0 as usize)
            .copied()
            .flatten()
            .unwrap_or(Action::Other(name))
    }
}

impl Machine {
    pub(super) fn specialise_dict(&mut self, pairs: &[[Value; 2]]) -> Option<Value> {
        let k = &self.keys;
        let (mut has_filename, mut has_name) = (false, false);
        for &[key, _] in pairs {
            match k.field(key) {
                // A trace entry's `action` comes first, as PyTorch writes them.
                Some(Field::Action) => return self.entry_of(pairs),
                Some(Field::Filename) => has_filename = true,
                Some(Field::Name) => has_name = true,
                _ => {}
            }
        }
        if has_filename && has_name {
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
            match k.field(key) {
                Some(Field::Action) => action = Some(as_str(value)?),
                Some(Field::Addr) => {
                    e.addr = as_u64(value)?;
                    if matches!(value, Value::Int(i) if i < 0) {
                        invalid
                            .get_or_insert_with(|| format!("address {} (negative)", e.addr as i64));
                    }
                }
                Some(Field::Size) => {
                    e.size = as_u64(value)?;
                    if let Err(why) = check_bytes(value) {
                        size_error = Some((value, why));
                    }
                }
                Some(Field::Stream) => e.stream = as_u64(value)?,
                Some(Field::TimeUs) => {
                    e.time_us = match value {
                        Value::None => None,
                        v => Some(as_u64(v)? as i64),
                    }
                }
                Some(Field::Frames) => e.stack = as_stack(value)?,
                Some(Field::CompileContext) => e.compile_context = as_str(value),
                Some(Field::UserMetadata) => e.user_metadata = as_str(value),
                Some(Field::DeviceFree) => e.device_free = as_u64(value),
                _ => {}
            }
        }
        e.action = k.action(action?);
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
            match k.field(key)? {
                Field::Filename => filename = Some(as_str(value)?),
                Field::Name => name = Some(as_str(value)?),
                Field::Line => line = as_u64(value)?,
                Field::FxNodeOp => (fx.node_op, has_fx) = (as_str(value), true),
                Field::FxNodeName => (fx.node_name, has_fx) = (as_str(value), true),
                Field::FxNodeTarget => (fx.node_target, has_fx) = (as_str(value), true),
                Field::FxOriginalTrace => (fx.original_trace, has_fx) = (as_str(value), true),
                _ => {}
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
