package io.pushhub.client;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * A JSON object's members: names and values in stored order, in two parallel arrays (compact and
 * quick to walk, which the canonical writer does for every object), read as an unmodifiable
 * {@link java.util.Map} in that order.
 *
 * <p>Invariants: the names are distinct; nothing changes after construction (edits return new
 * tables); objects of more than {@link #LINEAR_LOOKUP} members are looked up through a name →
 * position index built on first use (a race builds it twice, harmlessly).
 */
final class Members extends AbstractMap<String, Json> {
    static final Members EMPTY = new Members(new String[0], new Json[0], 0);

    /** Up to this many members, a lookup compares the names one by one. */
    private static final int LINEAR_LOOKUP = 8;

    private final String[] names;
    private final Json[] values;
    private final int count;
    private volatile HashMap<String, Integer> index;

    /** Over the first {@code count} entries of the arrays, which the caller gives up; the names must be distinct. */
    private Members(String[] names, Json[] values, int count) {
        this.names = names;
        this.values = values;
        this.count = count;
    }

    /** Collects members in order, refusing a repeated name. */
    static final class Builder {
        private String[] names;
        private Json[] values;
        private int count;
        private HashSet<String> seen; // past LINEAR_LOOKUP names

        Builder(int capacity) {
            names = new String[Math.max(capacity, 4)];
            values = new Json[names.length];
        }

        /** Adds a member; false (and nothing added) when the name is already there. */
        boolean add(String name, Json value) {
            if (count < LINEAR_LOOKUP) {
                for (int i = 0; i < count; i++) if (names[i].equals(name)) return false;
            } else {
                if (seen == null) seen = new HashSet<>(Arrays.asList(names).subList(0, count));
                if (!seen.add(name)) return false;
            }
            if (count == names.length) {
                names = Arrays.copyOf(names, count * 2);
                values = Arrays.copyOf(values, count * 2);
            }
            names[count] = name;
            values[count] = value;
            count++;
            return true;
        }

        /** The table; the builder must not be used again. */
        Members build() {
            return count == 0 ? EMPTY : new Members(names, values, count);
        }
    }

    int count() {
        return count;
    }

    String name(int i) {
        return names[i];
    }

    Json value(int i) {
        return values[i];
    }

    /** The position of the member named {@code name}, or -1. */
    int indexOf(String name) {
        if (count <= LINEAR_LOOKUP) {
            for (int i = 0; i < count; i++) if (names[i].equals(name)) return i;
            return -1;
        }
        Integer i = index().get(name);
        return i == null ? -1 : i;
    }

    private HashMap<String, Integer> index() {
        HashMap<String, Integer> built = index;
        if (built == null) {
            built = new HashMap<>(Json.capacityFor(count));
            for (int i = 0; i < count; i++) built.put(names[i], i);
            index = built;
        }
        return built;
    }

    /** These members with {@code name} set to {@code value}: in place if it exists, else at the end. */
    Members with(String name, Json value) {
        int i = indexOf(name);
        if (i >= 0) return replacing(i, value);
        String[] moreNames = Arrays.copyOf(names, count + 1);
        Json[] moreValues = Arrays.copyOf(values, count + 1);
        moreNames[count] = name;
        moreValues[count] = value;
        return new Members(moreNames, moreValues, count + 1);
    }

    /** These members with the value at position {@code i} replaced (the names are shared). */
    Members replacing(int i, Json value) {
        Json[] changed = Arrays.copyOf(values, count);
        changed[i] = value;
        return new Members(names.length == count ? names : Arrays.copyOf(names, count), changed, count);
    }

    /** These members without the one at position {@code i}. */
    Members without(int i) {
        if (count == 1) return EMPTY;
        String[] fewerNames = new String[count - 1];
        Json[] fewerValues = new Json[count - 1];
        System.arraycopy(names, 0, fewerNames, 0, i);
        System.arraycopy(values, 0, fewerValues, 0, i);
        System.arraycopy(names, i + 1, fewerNames, i, count - i - 1);
        System.arraycopy(values, i + 1, fewerValues, i, count - i - 1);
        return new Members(fewerNames, fewerValues, count - 1);
    }

    // ---- java.util.Map, read-only (AbstractMap's mutators throw UnsupportedOperationException)

    @Override
    public int size() {
        return count;
    }

    @Override
    public boolean containsKey(Object key) {
        return key instanceof String && indexOf((String) key) >= 0;
    }

    @Override
    public Json get(Object key) {
        if (!(key instanceof String)) return null;
        int i = indexOf((String) key);
        return i < 0 ? null : values[i];
    }

    @Override
    public Set<Entry<String, Json>> entrySet() {
        return new AbstractSet<Entry<String, Json>>() {
            @Override
            public int size() {
                return count;
            }

            @Override
            public Iterator<Entry<String, Json>> iterator() {
                return new Iterator<Entry<String, Json>>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next < count;
                    }

                    @Override
                    public Entry<String, Json> next() {
                        if (next >= count) throw new NoSuchElementException();
                        Entry<String, Json> entry = new SimpleImmutableEntry<>(names[next], values[next]);
                        next++;
                        return entry;
                    }
                };
            }
        };
    }
}
