using System;
using System.Collections.Concurrent;
using System.IO;
using System.Runtime.Serialization;
using System.Runtime.Serialization.Json;
using System.Xml;

namespace Laurel.Client
{
    /// <summary>JSON in and out with DataContractJsonSerializer: one serializer per type, kept.</summary>
    internal static class Json
    {
        private static readonly ConcurrentDictionary<Type, DataContractJsonSerializer> Serializers =
            new ConcurrentDictionary<Type, DataContractJsonSerializer>();

        // Dictionaries (event metadata) as JSON objects, not as lists of key/value pairs.
        private static readonly DataContractJsonSerializerSettings Settings =
            new DataContractJsonSerializerSettings { UseSimpleDictionaryFormat = true };

        private static DataContractJsonSerializer For(Type type)
        {
            return Serializers.GetOrAdd(type, t => new DataContractJsonSerializer(t, Settings));
        }

        public static byte[] Write<T>(T value)
        {
            using (var stream = new MemoryStream())
            {
                For(typeof(T)).WriteObject(stream, value);
                return stream.ToArray();
            }
        }

        /// <summary>The body read as T; null when it is not JSON of that shape.</summary>
        public static T TryRead<T>(byte[] body) where T : class
        {
            if (body == null || body.Length == 0) return null;
            try
            {
                using (var stream = new MemoryStream(body))
                {
                    return For(typeof(T)).ReadObject(stream) as T;
                }
            }
            catch (SerializationException)
            {
                return null;
            }
            catch (XmlException)
            {
                return null;
            }
            catch (FormatException)
            {
                return null;
            }
        }
    }
}
