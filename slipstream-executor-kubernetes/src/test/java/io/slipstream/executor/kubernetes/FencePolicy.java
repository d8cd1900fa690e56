package io.slipstream.executor.kubernetes;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.CelType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The leader fence's ValidatingAdmissionPolicy of {@code deploy/kubernetes/fence-policy.yaml}, evaluated the way the
 * API server does, with cel-java: match constraints (operation), match conditions, variables, validations (and their
 * messages), the binding's missing-parameter action, and failurePolicy Fail (an expression that fails refuses).
 * Variables are evaluated in order; one that fails is left out, so that an expression using it fails, as the API
 * server's lazy variables would (and one not used does no harm, as there).
 */
final class FencePolicy {
    static final Path FILE = Path.of("..", "deploy", "kubernetes", "fence-policy.yaml");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();

    /** What the API server answers. */
    sealed interface Decision {
        /** Allowed, or not this policy's business. */
        record Allowed(boolean matched) implements Decision {
        }

        record Denied(String message) implements Decision {
        }
    }

    private record Check(String name, CelRuntime.Program program, CelRuntime.Program message) {
    }

    final ValidatingAdmissionPolicy policy;
    final ValidatingAdmissionPolicyBinding binding;
    private final List<String> operations;
    private final List<Check> conditions = new ArrayList<>();
    private final List<Check> variables = new ArrayList<>();
    private final List<Check> validations = new ArrayList<>();

    private FencePolicy(ValidatingAdmissionPolicy policy, ValidatingAdmissionPolicyBinding binding) {
        this.policy = policy;
        this.binding = binding;
        this.operations = policy.getSpec().getMatchConstraints().getResourceRules().stream().flatMap(rule -> rule.getOperations().stream()).toList();
        policy.getSpec().getMatchConditions().forEach(c -> conditions.add(new Check(c.getName(), compile(c.getExpression(), SimpleType.BOOL), null)));
        policy.getSpec().getVariables().forEach(v -> variables.add(new Check(v.getName(), compile(v.getExpression(), SimpleType.DYN), null)));
        for (var validation : policy.getSpec().getValidations()) {
            validations.add(new Check(validation.getExpression(), compile(validation.getExpression(), SimpleType.BOOL),
                    validation.getMessageExpression() == null ? null : compile(validation.getMessageExpression(), SimpleType.STRING)));
        }
    }

    static FencePolicy load() {
        ValidatingAdmissionPolicy policy = null;
        ValidatingAdmissionPolicyBinding binding = null;
        for (HasMetadata document : documents()) {
            if (document instanceof ValidatingAdmissionPolicy p) {
                policy = p;
            } else if (document instanceof ValidatingAdmissionPolicyBinding b) {
                binding = b;
            }
        }
        if (policy == null || binding == null) {
            throw new AssertionError(FILE + " has no ValidatingAdmissionPolicy and binding");
        }
        return new FencePolicy(policy, binding);
    }

    static List<HasMetadata> documents() {
        Object parsed;
        try (InputStream in = Files.newInputStream(FILE)) {
            parsed = SERIALIZATION.unmarshal(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Collection<?> documents = parsed instanceof Collection<?> list ? list : List.of(parsed);
        return documents.stream().map(HasMetadata.class::cast).toList();
    }

    /** The expressions compile against what the API server gives them; {@code result} is what they must return. */
    private static CelRuntime.Program compile(String expression, CelType result) {
        CelCompiler compiler = CelCompilerFactory.standardCelCompilerBuilder()
                .setStandardMacros(CelStandardMacro.STANDARD_MACROS) // has(), as the API server's CEL
                .addVar("object", SimpleType.DYN)
                .addVar("oldObject", SimpleType.DYN)
                .addVar("params", SimpleType.DYN)
                .addVar("request", SimpleType.DYN)
                .addVar("variables", MapType.create(SimpleType.STRING, SimpleType.DYN))
                .setResultType(result)
                .build();
        try {
            CelAbstractSyntaxTree ast = compiler.compile(expression).getAst();
            return RUNTIME.createProgram(ast);
        } catch (CelValidationException | CelEvaluationException e) {
            throw new AssertionError("the policy's expression does not compile: " + expression + "\n" + e.getMessage(), e);
        }
    }

    /**
     * The policy's answer to a request on a pod. {@code object} and {@code oldObject} as the API server sees them
     * (JSON as maps; {@code oldObject} null on CREATE); {@code params} the ConfigMap, null when there is none.
     */
    Decision admit(String operation, Object object, Object oldObject, Object params) {
        if (!operations.contains(operation)) {
            return new Decision.Allowed(false);
        }
        Map<String, Object> input = new LinkedHashMap<>();
        input.put("object", cel(object));
        if (oldObject != null) {
            input.put("oldObject", cel(oldObject));
        }
        input.put("request", Map.of("operation", operation));
        for (Check condition : conditions) {
            try {
                if (!Boolean.TRUE.equals(condition.program().eval(input))) {
                    return new Decision.Allowed(false);
                }
            } catch (CelEvaluationException e) {
                return new Decision.Denied("match condition " + condition.name() + " failed: " + e.getMessage()); // failurePolicy Fail
            }
        }
        if (params == null) {
            return "Allow".equals(binding.getSpec().getParamRef().getParameterNotFoundAction()) ? new Decision.Allowed(true)
                    : new Decision.Denied("no params found for policy binding " + binding.getMetadata().getName());
        }
        input.put("params", cel(params));
        Map<String, Object> values = new LinkedHashMap<>();
        input.put("variables", values);
        List<String> failed = new ArrayList<>();
        for (Check variable : variables) {
            try {
                values.put(variable.name(), variable.program().eval(input));
            } catch (CelEvaluationException e) {
                failed.add(variable.name() + ": " + e.getMessage()); // left out: an expression that reads it fails
            }
        }
        for (Check validation : validations) {
            try {
                if (!Boolean.TRUE.equals(validation.program().eval(input))) {
                    return new Decision.Denied(message(validation, input));
                }
            } catch (CelEvaluationException e) {
                return new Decision.Denied("expression '" + validation.name() + "' resulted in error: " + e.getMessage()
                        + (failed.isEmpty() ? "" : " (variables that failed: " + failed + ")"));
            }
        }
        return new Decision.Allowed(true);
    }

    private static String message(Check validation, Map<String, Object> input) {
        if (validation.message() == null) {
            return "failed expression: " + validation.name();
        }
        try {
            return (String) validation.message().eval(input);
        } catch (CelEvaluationException e) {
            return "failed expression: " + validation.name(); // as the API server falls back to when messageExpression fails
        }
    }

    /** JSON as CEL sees it: integers are int64 (CEL has no int32). */
    @SuppressWarnings("unchecked")
    static Object cel(Object value) {
        Object json = value instanceof Map<?, ?> || value instanceof List<?> || value == null || value instanceof String
                ? value : SERIALIZATION.convertValue(value, Map.class);
        return normalize(json);
    }

    private static Object normalize(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> copy = new LinkedHashMap<>();
            map.forEach((k, v) -> {
                if (v != null) {
                    copy.put((String) k, normalize(v));
                }
            });
            return copy;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(FencePolicy::normalize).toList();
        }
        if (value instanceof Integer || value instanceof Short || value instanceof Byte) {
            return ((Number) value).longValue();
        }
        if (value instanceof Float f) {
            return f.doubleValue();
        }
        return value;
    }
}
