package io.slipstream.api.label;

import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * One requirement of a label selector. {@code k=v} and {@code k==v} are {@link In} with one value, {@code k!=v} is
 * {@link NotIn} with one; as in Kubernetes, {@code !=} and {@code notin} also match objects without the key.
 * {@link Cases} makes every user of a requirement handle every kind (Java 17 has no exhaustive switch over sealed types).
 */
public sealed interface Requirement permits Requirement.In, Requirement.NotIn, Requirement.Exists, Requirement.NotExists {
    String key();

    <T> T accept(Cases<T> cases);

    default boolean matches(Map<String, String> labels) {
        return accept(new Cases<>() {
            @Override
            public Boolean in(In r) {
                return labels.containsKey(r.key()) && r.values().contains(labels.get(r.key()));
            }

            @Override
            public Boolean notIn(NotIn r) {
                return !labels.containsKey(r.key()) || !r.values().contains(labels.get(r.key()));
            }

            @Override
            public Boolean exists(Exists r) {
                return labels.containsKey(r.key());
            }

            @Override
            public Boolean notExists(NotExists r) {
                return !labels.containsKey(r.key());
            }
        });
    }

    interface Cases<T> {
        T in(In requirement);

        T notIn(NotIn requirement);

        T exists(Exists requirement);

        T notExists(NotExists requirement);
    }

    /** The key has one of {@code values}. */
    record In(String key, SortedSet<String> values) implements Requirement {
        public In {
            values = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(values));
        }

        @Override
        public <T> T accept(Cases<T> cases) {
            return cases.in(this);
        }

        @Override
        public String toString() {
            return values.size() == 1 ? key + "=" + values.first() : key + " in (" + String.join(",", values) + ")";
        }
    }

    /** The key is missing or has none of {@code values}. */
    record NotIn(String key, SortedSet<String> values) implements Requirement {
        public NotIn {
            values = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(values));
        }

        @Override
        public <T> T accept(Cases<T> cases) {
            return cases.notIn(this);
        }

        @Override
        public String toString() {
            return values.size() == 1 ? key + "!=" + values.first() : key + " notin (" + String.join(",", values) + ")";
        }
    }

    /** The key is there, with any value. */
    record Exists(String key) implements Requirement {
        @Override
        public <T> T accept(Cases<T> cases) {
            return cases.exists(this);
        }

        @Override
        public String toString() {
            return key;
        }
    }

    /** The key is not there. */
    record NotExists(String key) implements Requirement {
        @Override
        public <T> T accept(Cases<T> cases) {
            return cases.notExists(this);
        }

        @Override
        public String toString() {
            return "!" + key;
        }
    }
}
