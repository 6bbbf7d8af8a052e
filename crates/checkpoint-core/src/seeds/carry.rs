//! The carry: what an import keeps under `extensions[<format>]` so that an export gives the file
//! back, namely the fields the model has no place for and the way the file wrote the ones it mapped.
//!
//! Objects and lists of the file are named by paths such as `$`, `$.context_summary` or
//! `$.completed_phases`. A list keeps one slot per entry, in the file's order: the phase or task
//! the entry stands for, or the entry verbatim when the model does not hold it. An export first
//! builds the plain document from the model, then dresses it with the carry: kept fields are
//! added, and a field (or list entry) the file wrote differently is written as the file had it for
//! as long as the model still means the same thing.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::{
    model::Workflow,
    seeds::{document::parse_time, format::SeedFormat},
};

/// The carry of one imported file, stored under `Workflow::extensions[<format>]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Carry {
    /// Objects of the file, by path.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub objects: BTreeMap<String, Slot>,
    /// Lists of entries, by path, in the file's order.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lists: BTreeMap<String, Vec<Slot>>,
}

/// One object or list entry of the file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Slot {
    /// The phase or task a list entry stands for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Fields the model has no place for, as written.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub fields: Map<String, Value>,
    /// Mapped fields the file wrote differently from a plain export, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub written: BTreeMap<String, Written>,
    /// A list entry the model does not hold (superseded, or not understood), as written.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub verbatim: Option<Value>,
    /// For an entry of a log (an append-only list such as `completed_steps`), the time of the
    /// event it records: the entry is written as it was while the model holds the same event,
    /// and a later event of the same phase is appended after it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub at: Option<Value>,
    /// A list entry a plain export adds that the file did not have; left out while unchanged.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub omitted: Option<Value>,
}

/// How the file wrote a field, and what a plain export writes for the same state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Written {
    /// The plain export's value; absent when a plain export leaves the field out.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub meaning: Option<Value>,
    /// The file's value; absent when the file left the field out.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub value: Option<Value>,
}

/// Reads a present field as `Some`, even when it is `null`.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// Where an export placed a list entry: the slot it came from, and the key it stands for.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    slot: Option<usize>,
    key: Option<String>,
}

impl Slot {
    /// The fields of `raw` that are not in `known`.
    pub(crate) fn of(raw: &Map<String, Value>, known: &[&str]) -> Self {
        Self {
            fields: raw
                .iter()
                .filter(|(name, _)| !known.contains(&name.as_str()))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            ..Self::default()
        }
    }

    /// A list entry standing for `key`, keeping the fields of `raw` that are not in `known`.
    pub(crate) fn keyed(key: &str, raw: &Map<String, Value>, known: &[&str]) -> Self {
        Self {
            key: Some(key.to_owned()),
            ..Self::of(raw, known)
        }
    }

    /// A list entry kept as written.
    pub(crate) fn verbatim(value: Value) -> Self {
        Self {
            verbatim: Some(value),
            ..Self::default()
        }
    }

    /// An entry of a log, recording the event at `at` of `key`, kept as written.
    pub(crate) fn logged(key: &str, at: Value, raw: &Map<String, Value>) -> Self {
        Self {
            key: Some(key.to_owned()),
            at: Some(at),
            verbatim: Some(Value::Object(raw.clone())),
            ..Self::default()
        }
    }

    /// Keeps a field as written because the model cannot hold its value.
    pub(crate) fn keep(&mut self, raw: &Map<String, Value>, field: &str) {
        if let Some(value) = raw.get(field) {
            self.fields.insert(field.to_owned(), value.clone());
        }
    }

    /// Reads the time field `field` of value `value`; a value that is not a readable time is kept
    /// as written.
    pub(crate) fn time(&mut self, field: &str, value: Option<&Value>) -> Option<DateTime<Utc>> {
        let value = value?;
        let time = value.as_str().and_then(parse_time);
        if time.is_none() {
            self.fields.insert(field.to_owned(), value.clone());
        }
        time
    }

    fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// Adds the kept fields to a plain object, then restores fields as the file wrote them.
    fn dress(&self, mut object: Map<String, Value>) -> Map<String, Value> {
        for (name, value) in &self.fields {
            if !object.contains_key(name) {
                object.insert(name.clone(), value.clone());
            }
        }
        for (name, written) in &self.written {
            if object.get(name) == written.meaning.as_ref() {
                match &written.value {
                    Some(value) => {
                        object.insert(name.clone(), value.clone());
                    }
                    None => {
                        object.shift_remove(name);
                    }
                }
            }
        }
        object
    }
}

impl Carry {
    /// The carry of a workflow imported from `format`, or an empty one.
    pub(crate) fn load(workflow: &Workflow, format: SeedFormat) -> Self {
        workflow
            .extensions
            .get(format.name())
            .and_then(|value| serde_json::from_value(value.clone()).ok())
            .unwrap_or_default()
    }

    /// Stores the carry in the workflow's extensions, leaving out what holds nothing.
    pub(crate) fn store(mut self, workflow: &mut Workflow, format: SeedFormat) {
        self.objects
            .retain(|path, slot| !path.contains('.') || !slot.is_empty());
        let value = serde_json::to_value(&self).expect("a carry always serializes");
        workflow.extensions.insert(format.name().to_owned(), value);
    }

    /// Starts the slot of an object, keeping the fields of `raw` that are not in `known`.
    pub(crate) fn object(
        &mut self,
        path: &str,
        raw: &Map<String, Value>,
        known: &[&str],
    ) -> &mut Slot {
        let slot = self.objects.entry(path.to_owned()).or_default();
        *slot = Slot::of(raw, known);
        slot
    }

    /// The slot of an object, created empty if the import did not start it.
    pub(crate) fn object_mut(&mut self, path: &str) -> &mut Slot {
        self.objects.entry(path.to_owned()).or_default()
    }

    /// Whether the file had the object at `path` (a companion file's root, for example).
    pub(crate) fn has_object(&self, path: &str) -> bool {
        self.objects.contains_key(path)
    }

    /// Whether the object at `path` keeps a field `name` the model has no place for.
    pub(crate) fn keeps(&self, path: &str, name: &str) -> bool {
        self.objects
            .get(path)
            .is_some_and(|slot| slot.fields.contains_key(name))
    }

    /// The slots of a list, created empty.
    pub(crate) fn list_mut(&mut self, path: &str) -> &mut Vec<Slot> {
        self.lists.entry(path.to_owned()).or_default()
    }
}

/// A plain list entry before it is arranged: its key, the time of its event (in logs), and
/// the object.
type Unplaced = (String, Option<Value>, Map<String, Value>);

/// Builds export documents, dressing them with a carry and noting where list entries went.
pub(crate) struct Builder<'a> {
    carry: &'a Carry,
    placed: BTreeMap<String, Vec<Placed>>,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(carry: &'a Carry) -> Self {
        Self {
            carry,
            placed: BTreeMap::new(),
        }
    }

    /// The carry the documents are dressed with.
    pub(crate) fn carry(&self) -> &Carry {
        self.carry
    }

    /// Dresses the plain object at `path`.
    pub(crate) fn object(&self, path: &str, object: Map<String, Value>) -> Map<String, Value> {
        match self.carry.objects.get(path) {
            Some(slot) => slot.dress(object),
            None => object,
        }
    }

    /// Dresses the plain object at `path` that stands for `key`, if the file's object there stood
    /// for the same key.
    pub(crate) fn keyed_object(
        &self,
        path: &str,
        key: &str,
        object: Map<String, Value>,
    ) -> Map<String, Value> {
        match self.carry.objects.get(path) {
            Some(slot) if slot.key.as_deref().is_none_or(|held| held == key) => slot.dress(object),
            _ => object,
        }
    }

    /// The kept fields of the entry standing for `key` in the lists or objects at `paths`.
    fn fields_elsewhere(&self, paths: &[&str], key: &str) -> Option<&Map<String, Value>> {
        paths.iter().find_map(|path| {
            let held = |slot: &&Slot| slot.key.as_deref() == Some(key);
            self.carry
                .lists
                .get(*path)
                .and_then(|slots| slots.iter().find(held))
                .or_else(|| self.carry.objects.get(*path).filter(held))
                .map(|slot| &slot.fields)
        })
    }

    /// Arranges the plain entries of the list at `path`, each with the key it stands for: in the
    /// file's order where the file had them, then in the given order.
    pub(crate) fn list(&mut self, path: &str, entries: Vec<(String, Map<String, Value>)>) -> Value {
        let entries = entries
            .into_iter()
            .map(|(key, object)| (key, None, object))
            .collect();
        self.arrange(path, entries, &[])
    }

    /// Like [`Builder::list`], for entries that move between lists (a phase going from
    /// `remaining_phases` to `completed_phases`): a new entry takes the kept fields of the entry
    /// for its key in the lists or objects at `also`.
    pub(crate) fn list_moving(
        &mut self,
        path: &str,
        entries: Vec<(String, Map<String, Value>)>,
        also: &[&str],
    ) -> Value {
        let entries = entries
            .into_iter()
            .map(|(key, object)| (key, None, object))
            .collect();
        self.arrange(path, entries, also)
    }

    /// Arranges the plain entries of the log at `path`, each with its key and the time of the
    /// event it records (see [`Slot::at`]).
    pub(crate) fn log(
        &mut self,
        path: &str,
        entries: Vec<(String, Value, Map<String, Value>)>,
        also: &[&str],
    ) -> Value {
        let entries = entries
            .into_iter()
            .map(|(key, at, object)| (key, Some(at), object))
            .collect();
        self.arrange(path, entries, also)
    }

    fn arrange(&mut self, path: &str, entries: Vec<Unplaced>, also: &[&str]) -> Value {
        let no_slots = Vec::new();
        let slots = self.carry.lists.get(path).unwrap_or(&no_slots);
        let mut entries: Vec<Option<Unplaced>> = entries.into_iter().map(Some).collect();
        let mut values = Vec::new();
        let mut placed = Vec::new();
        for (index, slot) in slots.iter().enumerate() {
            if let Some(value) = &slot.verbatim {
                values.push(value.clone());
                placed.push(Placed {
                    slot: Some(index),
                    key: None,
                });
                if let (Some(key), Some(at)) = (&slot.key, &slot.at) {
                    // The model's entry for the same event is the one written here.
                    let same = entries.iter_mut().find(|entry| {
                        entry
                            .as_ref()
                            .is_some_and(|(name, time, _)| name == key && time.as_ref() == Some(at))
                    });
                    if let Some(same) = same {
                        *same = None;
                    }
                }
                continue;
            }
            let Some(key) = &slot.key else { continue };
            let Some((key, _, object)) = entries
                .iter_mut()
                .find(|entry| entry.as_ref().is_some_and(|(name, _, _)| name == key))
                .and_then(Option::take)
            else {
                continue;
            };
            let value = Value::Object(slot.dress(object));
            if slot.omitted.as_ref() == Some(&value) {
                continue;
            }
            values.push(value);
            placed.push(Placed {
                slot: Some(index),
                key: Some(key),
            });
        }
        for (key, _, mut object) in entries.into_iter().flatten() {
            if let Some(fields) = self.fields_elsewhere(also, &key) {
                for (name, value) in fields {
                    if !object.contains_key(name) {
                        object.insert(name.clone(), value.clone());
                    }
                }
            }
            values.push(Value::Object(object));
            placed.push(Placed {
                slot: None,
                key: Some(key),
            });
        }
        self.placed.insert(path.to_owned(), placed);
        Value::Array(values)
    }

    pub(crate) fn into_placed(self) -> BTreeMap<String, Vec<Placed>> {
        self.placed
    }
}

/// Records in the carry how the file (`raw`) differs from the plain export (`canonical`) of the
/// object at `path`, so that the export writes the file back.
pub(crate) fn reconcile(
    carry: &mut Carry,
    placed: &BTreeMap<String, Vec<Placed>>,
    path: &str,
    raw: &Map<String, Value>,
    canonical: &Map<String, Value>,
) {
    let names = raw
        .keys()
        .chain(canonical.keys().filter(|name| !raw.contains_key(*name)));
    for name in names {
        let (raw_value, canonical_value) = (raw.get(name), canonical.get(name));
        if raw_value == canonical_value {
            continue;
        }
        let sub = format!("{path}.{name}");
        let handled = match (raw_value, canonical_value) {
            (Some(Value::Object(raw_value)), Some(Value::Object(canonical_value)))
                if carry.objects.contains_key(&sub) =>
            {
                reconcile(carry, placed, &sub, raw_value, canonical_value);
                true
            }
            (Some(Value::Array(raw_value)), Some(Value::Array(canonical_value))) => {
                placed.get(&sub).is_some_and(|placed| {
                    reconcile_list(carry, &sub, placed, raw_value, canonical_value)
                })
            }
            _ => false,
        };
        if !handled {
            carry.object_mut(path).written.insert(
                name.clone(),
                Written {
                    meaning: canonical_value.cloned(),
                    value: raw_value.cloned(),
                },
            );
        }
    }
}

/// Reconciles a list entry by entry; returns false when the entries cannot be paired, in which
/// case the caller records the whole list.
fn reconcile_list(
    carry: &mut Carry,
    path: &str,
    placed: &[Placed],
    raw: &[Value],
    canonical: &[Value],
) -> bool {
    let Some(slots) = carry.lists.get_mut(path) else {
        return false;
    };
    if slots.len() != raw.len() || placed.len() != canonical.len() {
        return false;
    }
    let mut produced = vec![false; slots.len()];
    let mut added = Vec::new();
    for (value, place) in canonical.iter().zip(placed) {
        let Some(index) = place.slot else {
            added.push(Slot {
                key: place.key.clone(),
                omitted: Some(value.clone()),
                ..Slot::default()
            });
            continue;
        };
        produced[index] = true;
        let slot = &mut slots[index];
        if slot.verbatim.is_some() {
            continue;
        }
        match (&raw[index], value) {
            (Value::Object(raw_entry), Value::Object(canonical_entry)) => {
                let names = raw_entry.keys().chain(
                    canonical_entry
                        .keys()
                        .filter(|name| !raw_entry.contains_key(*name)),
                );
                for name in names {
                    let (raw_value, canonical_value) =
                        (raw_entry.get(name), canonical_entry.get(name));
                    if raw_value != canonical_value {
                        slot.written.insert(
                            name.clone(),
                            Written {
                                meaning: canonical_value.cloned(),
                                value: raw_value.cloned(),
                            },
                        );
                    }
                }
            }
            (raw_entry, _) => *slot = Slot::verbatim(raw_entry.clone()),
        }
    }
    for (index, slot) in slots.iter_mut().enumerate() {
        if !produced[index] && slot.verbatim.is_none() {
            *slot = Slot::verbatim(raw[index].clone());
        }
    }
    slots.extend(added);
    true
}
